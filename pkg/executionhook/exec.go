package executionhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream"
)

// PodExec runs commands in containers through the pods/exec subresource,
// as kubectl exec does: WebSocket first, SPDY when the upgrade to it fails
// other than by the API server refusing the request.
type PodExec struct {
	config *rest.Config
	client kubernetes.Interface
}

// NewPodExec returns a PodExec for the API server of config.
func NewPodExec(config *rest.Config, client kubernetes.Interface) *PodExec {
	return &PodExec{config: config, client: client}
}

// ErrNotStarted marks an exec that failed before its streams were set up
// (the upgrade was refused or never answered): the command did not run,
// so trying again cannot run it twice.
var ErrNotStarted = errors.New("command not started")

// ExitError is a command's non-zero exit. It carries no output: what a
// command prints may be secret, and goes only where the hook asked.
type ExitError struct {
	Code int
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("command exited with status %d", e.Code)
}

// Exec runs command in the container and waits for it until ctx ends,
// writing its stdout and stderr to output (nil: discarded). A non-zero
// exit is an *ExitError.
func (p *PodExec) Exec(ctx context.Context, namespace, pod, container string, command []string, output io.Writer) error {
	if output == nil {
		output = io.Discard
	}
	req := p.client.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(pod).
		SubResource("exec").VersionedParams(&corev1.PodExecOptions{
		Container: container, Command: command, Stdout: true, Stderr: true,
	}, scheme.ParameterCodec)
	spdy, err := remotecommand.NewSPDYExecutor(p.config, http.MethodPost, req.URL())
	if err != nil {
		return fmt.Errorf("make SPDY executor: %w", err)
	}
	ws, err := remotecommand.NewWebSocketExecutor(p.config, http.MethodGet, req.URL().String())
	if err != nil {
		return fmt.Errorf("make WebSocket executor: %w", err)
	}
	exec, err := remotecommand.NewFallbackExecutor(ws, spdy, shouldFallback)
	if err != nil {
		return fmt.Errorf("make executor: %w", err)
	}
	err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: output, Stderr: output})
	if err == nil {
		return nil
	}
	var exit utilexec.ExitError
	if errors.As(err, &exit) && exit.Exited() {
		return &ExitError{Code: exit.ExitStatus()}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("exec in %s/%s: %w", pod, container, context.Cause(ctx))
	}
	if refused(err) {
		return fmt.Errorf("exec in %s/%s: %w: %w", pod, container, ErrNotStarted, err)
	}
	return fmt.Errorf("exec in %s/%s: %w", pod, container, err)
}

// refused reports whether the API server answered the WebSocket upgrade
// with an error Status (pod or container not found, bad request): nothing
// ran.
func refused(err error) bool {
	var up *httpstream.UpgradeFailureError
	var status *apierrors.StatusError
	return errors.As(err, &up) && errors.As(up.Cause, &status)
}

// shouldFallback says when to try SPDY after WebSocket failed: the upgrade
// failed other than by a refusal of the API server (a proxy without
// WebSocket, an old server), or was forbidden (a role granting pods/exec
// create without get allows the SPDY POST).
func shouldFallback(err error) bool {
	if httpstream.IsHTTPSProxyError(err) {
		return true
	}
	if !httpstream.IsUpgradeFailure(err) {
		return false
	}
	var up *httpstream.UpgradeFailureError
	if errors.As(err, &up) && apierrors.IsForbidden(up.Cause) {
		return true
	}
	return !refused(err)
}

// tailBuffer keeps the last max bytes written to it; the streams of one
// command write to it from two goroutines. It is used only for actions
// with captureOutput.
type tailBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if over := b.buf.Len() - b.max; over > 0 {
		b.buf.Next(over)
	}
	return len(p), nil
}

// String returns the kept output, trimmed, without a rune cut at its
// start.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.ToValidUTF8(string(bytes.TrimSpace(b.buf.Bytes())), "")
}

func (b *tailBuffer) reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Reset()
}
