package bench

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
)

// shellOperatorConfigurationName is shell-operator's
// --validating-webhook-configuration-name; the ValidatingWebhookConfiguration
// it writes is shellOperatorConfiguration, that name and the hooks'
// configuration id (its default, "hooks").
const (
	shellOperatorConfigurationName = "bench-shell-operator"
	shellOperatorConfiguration     = shellOperatorConfigurationName + "-hooks"
)

// BuildShellOperator builds shell-operator v1.4.12, the version the
// reference v1.5.0 pins, from the module in e2e/bench/reference into dir
// (see referenceBuild).
func BuildShellOperator(ctx context.Context, dir string) (string, error) {
	return buildReferenceModule(ctx, dir, "shell-operator", "github.com/flant/shell-operator/cmd/shell-operator", "shell-operator v1.4.12")
}

// webhookCerts are the files of a serving certificate for 127.0.0.1
// and the CA that signed it, which both webhook servers of the bench
// serve and publish.
type webhookCerts struct {
	Cert, Key, CA string
}

// writeWebhookCerts issues a self-signed CA and a serving certificate for
// 127.0.0.1 with client-go's helper into dir.
func writeWebhookCerts(dir string) (webhookCerts, error) {
	chain, key, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1)}, nil)
	if err != nil {
		return webhookCerts{}, fmt.Errorf("issue the webhook certificate: %w", err)
	}
	// The chain is the serving certificate, then the CA's.
	_, rest := pem.Decode(chain)
	ca, _ := pem.Decode(rest)
	if ca == nil {
		return webhookCerts{}, errors.New("issue the webhook certificate: no CA certificate in the chain")
	}
	c := webhookCerts{Cert: filepath.Join(dir, "tls.crt"), Key: filepath.Join(dir, "tls.key"), CA: filepath.Join(dir, "ca.crt")}
	for path, data := range map[string][]byte{c.Cert: chain, c.Key: key, c.CA: pem.EncodeToMemory(ca)} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return webhookCerts{}, fmt.Errorf("write %s: %w", path, err)
		}
	}
	return c, nil
}

// shellOperator is a running shell-operator.
type shellOperator struct {
	pid  int
	log  string
	stop func()
}

// startShellOperator starts shell-operator bin over hooksDir with its
// validating webhook server on 127.0.0.1:port.
func startShellOperator(ctx context.Context, bin, dir, hooksDir, kubeconfig, ns, port string, certs webhookCerts) (*shellOperator, error) {
	metrics, err := freePort(ctx)
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "shell-operator.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create shell-operator log: %w", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(runCtx, bin, "start", "--hooks-dir="+hooksDir, "--tmp-dir="+filepath.Join(dir, "shell-operator-tmp"),
		"--namespace="+ns, "--kube-config="+kubeconfig, "--kube-client-qps=-1",
		"--listen-address=127.0.0.1", "--listen-port="+metrics,
		"--debug-unix-socket="+filepath.Join(dir, "so.socket"),
		"--validating-webhook-configuration-name="+shellOperatorConfigurationName,
		"--validating-webhook-server-cert="+certs.Cert, "--validating-webhook-server-key="+certs.Key, "--validating-webhook-ca="+certs.CA,
		"--validating-webhook-listen-address=127.0.0.1", "--validating-webhook-listen-port="+port,
		"--log-type=json")
	cmd.Env = append(os.Environ(), "KUBE_CONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = stopGrace
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		cancel()
		_ = logFile.Close()
		return nil, fmt.Errorf("start shell-operator: %w", err)
	}
	return &shellOperator{pid: cmd.Process.Pid, log: logPath, stop: func() {
		cancel()
		_ = cmd.Wait()
		_ = logFile.Close()
	}}, nil
}

// pointShellOperatorAtLoopback waits for shell-operator's
// ValidatingWebhookConfiguration and points its webhooks at
// https://127.0.0.1:port with their paths: shell-operator names a
// Service, which a control plane without kube-proxy cannot route to, and
// writes its configuration only at start. It returns the path of the
// webhook named name.
func pointShellOperatorAtLoopback(ctx context.Context, client kubernetes.Interface, port, name string) (string, error) {
	vwcs := client.AdmissionregistrationV1().ValidatingWebhookConfigurations()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		cfg, err := vwcs.Get(ctx, shellOperatorConfiguration, metav1.GetOptions{})
		if err == nil {
			path, err := setLoopbackURLs(cfg, port, name)
			if err != nil {
				return "", err
			}
			if _, err = vwcs.Update(ctx, cfg, metav1.UpdateOptions{}); err == nil {
				return path, nil
			}
			if !apierrors.IsConflict(err) {
				return "", fmt.Errorf("point shell-operator's webhooks at 127.0.0.1: %w", err)
			}
		} else if !apierrors.IsNotFound(err) {
			return "", fmt.Errorf("read shell-operator's webhook configuration: %w", err)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("wait for shell-operator's webhook configuration: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

// setLoopbackURLs replaces each webhook's Service by a URL on 127.0.0.1
// with the Service's path, and returns the path of the webhook named name.
func setLoopbackURLs(cfg *admissionv1.ValidatingWebhookConfiguration, port, name string) (string, error) {
	var found string
	for i := range cfg.Webhooks {
		w := &cfg.Webhooks[i]
		var path string
		switch {
		case w.ClientConfig.Service != nil && w.ClientConfig.Service.Path != nil:
			path = *w.ClientConfig.Service.Path
		case w.ClientConfig.URL != nil:
			continue // already pointed
		default:
			return "", fmt.Errorf("shell-operator's webhook %s names no path", w.Name)
		}
		url := "https://" + net.JoinHostPort("127.0.0.1", port) + path
		w.ClientConfig.Service, w.ClientConfig.URL = nil, &url
		if w.Name == name {
			found = path
		}
	}
	if found == "" {
		return "", fmt.Errorf("shell-operator's webhook configuration has no webhook %s", name)
	}
	return found, nil
}
