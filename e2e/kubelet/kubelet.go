// Package kubelet is a fake kubelet for end-to-end tests against the local
// control plane, which has no kubelet: an HTTPS server on loopback that
// serves the kubelet's exec endpoint (/exec/{namespace}/{pod}/{container})
// with the CRI streaming server of the Kubernetes modules, so that
// pods/exec through the real kube-apiserver (kubectl exec, client-go's
// remotecommand) reaches it. It runs each command as a local process in a
// temporary directory of the container's own. Pods are API objects bound
// to its Node with a Running status; nothing else of a kubelet exists.
//
// The API server must trust its certificate and reach it by the Node's
// InternalIP: make the certificate with NewCertificate before the control
// plane starts and give it APIServerArgs.
package kubelet

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/util/cert"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/cri-streaming/pkg/streaming"
	remotecommandserver "k8s.io/cri-streaming/pkg/streaming/remotecommand"
	utilexec "k8s.io/utils/exec"
)

// Certificate is the fake kubelet's serving certificate and key, and the
// bundle the API server trusts it by.
type Certificate struct {
	CertFile, KeyFile string
}

// NewCertificate writes a self-signed serving certificate for 127.0.0.1
// into dir.
func NewCertificate(dir string) (Certificate, error) {
	crt, key, err := cert.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1)}, []string{"localhost"})
	if err != nil {
		return Certificate{}, fmt.Errorf("make kubelet certificate: %w", err)
	}
	c := Certificate{CertFile: filepath.Join(dir, "kubelet.crt"), KeyFile: filepath.Join(dir, "kubelet.key")}
	if err := os.WriteFile(c.CertFile, crt, 0o600); err != nil {
		return Certificate{}, fmt.Errorf("write kubelet certificate: %w", err)
	}
	if err := os.WriteFile(c.KeyFile, key, 0o600); err != nil {
		return Certificate{}, fmt.Errorf("write kubelet key: %w", err)
	}
	return c, nil
}

// APIServerArgs are the kube-apiserver flags that make it exec through the
// fake kubelet: verify its certificate, reach Nodes by InternalIP.
func (c Certificate) APIServerArgs() []string {
	return []string{
		"--kubelet-certificate-authority=" + c.CertFile,
		"--kubelet-preferred-address-types=InternalIP",
	}
}

// Kubelet is a running fake kubelet.
type Kubelet struct {
	// Port is the HTTPS port on 127.0.0.1, the Node's kubelet endpoint.
	Port int
	// Root holds one directory per container: Root/namespace/pod/container.
	Root string

	server *http.Server
	stream streaming.Server
	run    *runtime
}

// Start serves the exec endpoint on a free loopback port with cert until
// Close; commands run under root.
func Start(ctx context.Context, c Certificate, root string) (*Kubelet, error) {
	pair, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("load kubelet certificate: %w", err)
	}
	l, err := new(net.ListenConfig).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	rt := &runtime{root: root, cancels: map[int]context.CancelFunc{}}
	cfg := streaming.DefaultConfig
	cfg.Addr = l.Addr().String()
	// The CRI server's own URLs live under /cri/; /exec/... is the
	// kubelet's API, which hands each request to it.
	cfg.BaseURL = &url.URL{Scheme: "https", Host: cfg.Addr, Path: "/cri/"}
	stream, err := streaming.NewServer(cfg, rt)
	if err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("make streaming server: %w", err)
	}
	k := &Kubelet{Port: l.Addr().(*net.TCPAddr).Port, Root: root, stream: stream, run: rt}
	mux := http.NewServeMux()
	mux.Handle("/cri/", stream)
	mux.HandleFunc("/exec/{namespace}/{pod}/{container}", k.serveExec)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	k.server = &http.Server{
		Handler:           mux,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() { _ = k.server.ServeTLS(l, "", "") }()
	return k, nil
}

// serveExec is the kubelet's exec endpoint: it registers the request with
// the streaming server, as the kubelet does through the CRI's Exec call,
// and serves the stream from the URL that returns.
func (k *Kubelet) serveExec(w http.ResponseWriter, r *http.Request) {
	opts, err := remotecommandserver.NewOptions(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id := containerID(r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container"))
	resp, err := k.stream.GetExec(&runtimeapi.ExecRequest{
		ContainerId: id, Cmd: r.URL.Query()["command"],
		Stdin: opts.Stdin, Stdout: opts.Stdout, Stderr: opts.Stderr, Tty: opts.TTY,
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	u, err := url.Parse(resp.GetUrl())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = u.Path, ""
	k.stream.ServeHTTP(w, r2)
}

// ContainerDir is the directory the container's commands run in.
func (k *Kubelet) ContainerDir(namespace, pod, container string) string {
	return filepath.Join(k.Root, namespace, pod, container)
}

// Close stops serving and kills the commands still running.
func (k *Kubelet) Close() {
	_ = k.server.Close()
	k.run.killAll()
}

func containerID(namespace, pod, container string) string {
	return namespace + "/" + pod + "/" + container
}

// runtime runs the streaming server's exec requests as local processes.
type runtime struct {
	root    string
	mu      sync.Mutex
	next    int
	cancels map[int]context.CancelFunc // of the running commands
}

// Exec runs cmd in the container's directory, in a process group of its
// own, until it exits or the kubelet closes. A non-zero exit is an
// ExitError the streaming server reports as the command's status.
func (rt *runtime) Exec(ctx context.Context, id string, cmd []string, in io.Reader, stdout, stderr io.WriteCloser, _ bool, _ <-chan remotecommandserver.TerminalSize) error {
	parts := strings.Split(id, "/")
	if len(parts) != 3 || len(cmd) == 0 {
		return fmt.Errorf("bad exec request for %q", id)
	}
	dir := filepath.Join(rt.root, parts[0], parts[1], parts[2])
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rt.mu.Lock()
	n := rt.next
	rt.next++
	rt.cancels[n] = cancel
	rt.mu.Unlock()
	defer func() { rt.mu.Lock(); delete(rt.cancels, n); rt.mu.Unlock() }()

	c := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
	c.Dir = dir
	c.Env = append(os.Environ(), "CONTAINER_DIR="+dir)
	c.Stdin, c.Stdout, c.Stderr = in, writerOrDiscard(stdout), writerOrDiscard(stderr)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	c.WaitDelay = 2 * time.Second
	err := c.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() > 0 {
		return utilexec.CodeExitError{Err: err, Code: exit.ExitCode()}
	}
	return err
}

func writerOrDiscard(w io.WriteCloser) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

func (rt *runtime) killAll() {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, cancel := range rt.cancels {
		cancel()
	}
}

func (rt *runtime) Attach(context.Context, string, io.Reader, io.WriteCloser, io.WriteCloser, bool, <-chan remotecommandserver.TerminalSize) error {
	return errors.New("attach is not supported by the fake kubelet")
}

func (rt *runtime) PortForward(context.Context, string, int32, io.ReadWriteCloser) error {
	return errors.New("port-forward is not supported by the fake kubelet")
}
