package cluster

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Options configure Start.
type Options struct {
	// Binaries to run, from Build.
	Binaries Binaries
	// Dir holds data, certificates, logs and the kubeconfig. It must exist.
	Dir string
	// Detach starts the processes in their own session so they outlive the
	// caller (make cluster-up). Otherwise they are killed when the caller dies.
	Detach bool
	// Log receives progress lines (none when nil); the servers' own output
	// goes to files in Dir.
	Log io.Writer
	// APIServerArgs are more kube-apiserver flags, after Start's own.
	APIServerArgs []string
	// Workloads, when set, also runs the controllers, the scheduler and
	// simulated nodes, so that Deployments become available, Jobs complete
	// and namespaces finish deleting. Binaries.Workloads must be built
	// (BuildWorkloads). Without it nothing acts on stored workloads.
	Workloads *Workloads
}

// ControlPlane is a running etcd and kube-apiserver on loopback, with the
// controllers, the scheduler and kwok when Options.Workloads asks for them.
// etcd and the API server may be stopped and started again during a test
// (StopAPIServer, StartAPIServer, StopEtcd, StartEtcd): same ports,
// certificates and data; the others retry until the API server is back.
type ControlPlane struct {
	// Config is an admin client config for the API server.
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file with the same credentials.
	Kubeconfig string
	// Version is the server's Kubernetes version.
	Version string
	// Dir is the working directory given in Options.
	Dir string

	opts    Options
	servers []*server // etcd, kube-apiserver, then the workloads' servers
}

// server is one process of the control plane and how to start it again.
type server struct {
	name, bin string
	args      []string
	ready     func(ctx context.Context) error
	cmd       *exec.Cmd // nil while stopped
}

// readyTimeout bounds how long each server may take to become ready.
const readyTimeout = 60 * time.Second

// Start runs etcd and kube-apiserver on free loopback ports and waits until
// the API server reports ready; with Options.Workloads, also the
// controllers, the scheduler and kwok, until the simulated nodes are ready.
// On error nothing is left running.
func Start(ctx context.Context, opts Options) (_ *ControlPlane, err error) {
	// The deferred Stop needs the control plane itself: a named result
	// would be nil by then, each error path returning nil.
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	cp := &ControlPlane{Dir: opts.Dir, Version: opts.Binaries.Version, opts: opts}
	defer func() {
		if err != nil {
			_ = cp.Stop()
		}
	}()
	ports, err := freePorts(ctx, 3)
	if err != nil {
		return nil, err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	etcd := &server{name: "etcd", bin: opts.Binaries.Etcd, args: []string{
		"--name=default",
		"--data-dir=" + filepath.Join(opts.Dir, "etcd"),
		"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		"--unsafe-no-fsync", "--log-level=warn",
	}, ready: func(ctx context.Context) error {
		return waitHTTP(ctx, http.DefaultClient, etcdURL+"/health", "")
	}}
	cp.servers = append(cp.servers, etcd)
	if err := cp.startServer(ctx, etcd); err != nil {
		return nil, err
	}

	token, err := cp.writeCredentials()
	if err != nil {
		return nil, err
	}
	host := "https://127.0.0.1:" + strconv.Itoa(ports[2])
	insecure := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // readiness probe before the serving cert exists to be trusted
	}}
	apiserver := &server{name: "kube-apiserver", bin: opts.Binaries.KubeAPIServer, args: []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[2]),
		"--cert-dir=" + filepath.Join(opts.Dir, "certs"),
		"--token-auth-file=" + filepath.Join(opts.Dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + filepath.Join(opts.Dir, "sa.key"),
		"--service-account-signing-key-file=" + filepath.Join(opts.Dir, "sa.key"),
		"--service-cluster-ip-range=10.0.0.0/24",
		"--disable-admission-plugins=ServiceAccount",
	}, ready: func(ctx context.Context) error {
		return waitHTTP(ctx, insecure, host+"/readyz", token)
	}}
	apiserver.args = append(apiserver.args, opts.APIServerArgs...)
	cp.servers = append(cp.servers, apiserver)
	if err := cp.startServer(ctx, apiserver); err != nil {
		return nil, err
	}
	if err := cp.writeKubeconfig(host, token); err != nil {
		return nil, err
	}
	if opts.Workloads != nil {
		if err := cp.startWorkloads(ctx, *opts.Workloads); err != nil {
			return nil, err
		}
	}
	return cp, nil
}

// startServer starts s and waits until it is ready.
func (cp *ControlPlane) startServer(ctx context.Context, s *server) error {
	cmd, err := cp.start(cp.opts, s.name, s.bin, s.args...)
	if err != nil {
		return err
	}
	s.cmd = cmd
	if err := s.ready(ctx); err != nil {
		return fmt.Errorf("%s not ready: %w (see %s)", s.name, err, cp.logPath(s.name))
	}
	return nil
}

// StopAPIServer stops kube-apiserver, etcd going on, as an outage of the
// API server looks to its clients: connections refused.
func (cp *ControlPlane) StopAPIServer() error { return cp.stopServer(cp.servers[1]) }

// StartAPIServer starts kube-apiserver again, on the same port with the
// same certificates and etcd, and waits until it is ready.
func (cp *ControlPlane) StartAPIServer(ctx context.Context) error {
	return cp.startStopped(ctx, cp.servers[1])
}

// StopEtcd stops etcd, the API server going on and failing its requests
// and /readyz.
func (cp *ControlPlane) StopEtcd() error { return cp.stopServer(cp.servers[0]) }

// StartEtcd starts etcd again on its data and waits until it is healthy.
func (cp *ControlPlane) StartEtcd(ctx context.Context) error {
	return cp.startStopped(ctx, cp.servers[0])
}

func (cp *ControlPlane) startStopped(ctx context.Context, s *server) error {
	if s.cmd != nil {
		return fmt.Errorf("%s runs already", s.name)
	}
	return cp.startServer(ctx, s)
}

// stopServer stops s (SIGTERM, then SIGKILL) and waits until it has exited.
func (cp *ControlPlane) stopServer(s *server) error {
	if s.cmd == nil {
		return nil
	}
	p := s.cmd
	s.cmd = nil
	done := make(chan struct{})
	go func() { _ = p.Wait(); close(done) }()
	return stopProcess(p.Process.Pid, done)
}

// start launches one server with its output appended to Dir/<name>.log.
func (cp *ControlPlane) start(opts Options, name, bin string, args ...string) (*exec.Cmd, error) {
	logFile, err := os.OpenFile(cp.logPath(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create %s log: %w", name, err)
	}
	defer func() { _ = logFile.Close() }()
	// Not CommandContext: the servers' lifetime is Stop's business, not the
	// start call's context.
	cmd := exec.Command(bin, args...) //nolint:noctx // lifetime is owned by Stop
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if opts.Detach {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		// Killed with the test binary, even when it is killed itself.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	fmt.Fprintf(opts.Log, "started %s (pid %d)\n", name, cmd.Process.Pid)
	return cmd, nil
}

func (cp *ControlPlane) logPath(name string) string { return filepath.Join(cp.Dir, name+".log") }

// Pids returns the process ids of the running servers in start order:
// etcd, the API server, then the workloads' servers.
func (cp *ControlPlane) Pids() []int {
	pids := make([]int, 0, len(cp.servers))
	for _, s := range cp.servers {
		if s.cmd != nil {
			pids = append(pids, s.cmd.Process.Pid)
		}
	}
	return pids
}

// Stop terminates the servers in reverse start order, etcd last, and waits
// for them to exit.
func (cp *ControlPlane) Stop() error {
	var errs []error
	for i := len(cp.servers) - 1; i >= 0; i-- {
		errs = append(errs, cp.stopServer(cp.servers[i]))
	}
	return errors.Join(errs...)
}

// stopProcess sends SIGTERM, then SIGKILL after a grace period, until done
// reports the process gone.
func stopProcess(pid int, done <-chan struct{}) error {
	_ = syscall.Kill(pid, syscall.SIGTERM)
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill pid %d: %w", pid, err)
	}
	<-done
	return nil
}

// writeCredentials creates the admin token file and the service-account key.
func (cp *ControlPlane) writeCredentials() (string, error) {
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("make token: %w", err)
	}
	token := hex.EncodeToString(raw)
	line := token + ",admin,admin,system:masters\n"
	if err := os.WriteFile(filepath.Join(cp.Dir, "tokens.csv"), []byte(line), 0o600); err != nil {
		return "", fmt.Errorf("write token file: %w", err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", fmt.Errorf("make service-account key: %w", err)
	}
	block := &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}
	if err := os.WriteFile(filepath.Join(cp.Dir, "sa.key"), pem.EncodeToMemory(block), 0o600); err != nil {
		return "", fmt.Errorf("write service-account key: %w", err)
	}
	return token, nil
}

// writeKubeconfig writes Dir/kubeconfig trusting the server's self-signed
// certificate and fills cp.Config from it.
func (cp *ControlPlane) writeKubeconfig(host, token string) error {
	ca, err := os.ReadFile(filepath.Join(cp.Dir, "certs", "apiserver.crt"))
	if err != nil {
		return fmt.Errorf("read serving certificate: %w", err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: host, CertificateAuthorityData: ca}
	cfg.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "admin"}
	cfg.CurrentContext = "local"
	cp.Kubeconfig = filepath.Join(cp.Dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, cp.Kubeconfig); err != nil {
		return fmt.Errorf("write kubeconfig: %w", err)
	}
	rc, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		return fmt.Errorf("load kubeconfig: %w", err)
	}
	rc.QPS, rc.Burst = 200, 400
	cp.Config = rc
	return nil
}

// freePorts reserves n distinct loopback ports by listening on port 0.
func freePorts(ctx context.Context, n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := new(net.ListenConfig).Listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// waitHTTP polls url until it answers 200 or readyTimeout passes.
func waitHTTP(ctx context.Context, client *http.Client, url, token string) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s answered %s", url, resp.Status)
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; last: %w", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// StopPids stops servers started by another process (make cluster-down):
// SIGTERM, then SIGKILL after a grace period, polling until each is gone.
func StopPids(pids []int) error {
	var errs []error
	for i := len(pids) - 1; i >= 0; i-- {
		pid := pids[i]
		done := make(chan struct{})
		go func() {
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for syscall.Kill(pid, 0) == nil {
				<-tick.C
			}
			close(done)
		}()
		errs = append(errs, stopProcess(pid, done))
	}
	return errors.Join(errs...)
}
