package executionhook

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/addon-operator/addon-operator/pkg/executionhook"
)

// kubectlExec runs command in the container as kubectl exec does: a
// pods/exec request through the API server over WebSocket, SPDY when the
// upgrade fails, with stdin.
func kubectlExec(ctx context.Context, t *testing.T, ns, pod, container, stdin string, command ...string) (stdout, stderr string, err error) {
	t.Helper()
	req := cp.Clientset(t).CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: container, Command: command, Stdin: true, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	spdy, err := remotecommand.NewSPDYExecutor(cp.Config, http.MethodPost, req.URL())
	if err != nil {
		t.Fatal(err)
	}
	ws, err := remotecommand.NewWebSocketExecutor(cp.Config, http.MethodGet, req.URL().String())
	if err != nil {
		t.Fatal(err)
	}
	exec, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut})
	return out.String(), errOut.String(), err
}

// TestKubectlExec checks the exec path the controller relies on, with the
// client kubectl uses: through the real API server to the fake kubelet,
// stdin, stdout, stderr and the exit code, in the container's directory.
func TestKubectlExec(t *testing.T) {
	t.Parallel()
	ns := cp.Namespace(t)
	n := startNode(t)
	n.pod(t, ns, "db", nil, "db", "sidecar")

	stdout, stderr, err := kubectlExec(t.Context(), t, ns, "db", "db", "hello\n", "sh", "-c", "cat; pwd; echo oops >&2")
	if err != nil {
		t.Fatalf("exec: %v (stderr %q)", err, stderr)
	}
	dir := n.ContainerDir(ns, "db", "db")
	if diff := cmp.Diff("hello\n"+dir+"\n", stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if stderr != "oops\n" {
		t.Errorf("stderr = %q, want oops", stderr)
	}

	_, _, err = kubectlExec(t.Context(), t, ns, "db", "sidecar", "", "sh", "-c", "touch mark; exit 3")
	var exit utilexec.ExitError
	if !errors.As(err, &exit) || exit.ExitStatus() != 3 {
		t.Errorf("exit status: err %v, want exit status 3", err)
	}
	if _, err := os.Stat(filepath.Join(n.ContainerDir(ns, "db", "sidecar"), "mark")); err != nil {
		t.Errorf("the command did not run in the sidecar's directory: %v", err)
	}

	// The controller's executor reports the same through its own type.
	pe := executionhook.NewPodExec(cp.Config, cp.Clientset(t))
	// The exit status is exact on every try. The output may arrive short
	// when the API server's stream translation closes on the exit status
	// first (a known race of exec through the API server), so it must
	// arrive whole in one of three tries.
	var outputs []string
	for range 3 {
		var out bytes.Buffer
		err = pe.Exec(t.Context(), ns, "db", "db", []string{"sh", "-c", "echo broken; exit 4"}, &out)
		var ee *executionhook.ExitError
		if !errors.As(err, &ee) || ee.Code != 4 || strings.Contains(err.Error(), "broken") {
			t.Fatalf("PodExec.Exec = %v: want exit 4 without the output", err)
		}
		if outputs = append(outputs, out.String()); out.String() == "broken\n" {
			break
		}
	}
	if outputs[len(outputs)-1] != "broken\n" {
		t.Errorf("PodExec.Exec outputs %q: want broken in one of three tries", outputs)
	}
	if _, _, err := kubectlExec(t.Context(), t, ns, "db", "nope", "", "true"); err == nil {
		t.Errorf("exec into a container the pod does not have succeeded")
	}
	// A refused exec is known not to have started the command.
	if err := pe.Exec(t.Context(), ns, "db", "nope", []string{"true"}, nil); !errors.Is(err, executionhook.ErrNotStarted) {
		t.Errorf("PodExec.Exec into a missing container = %v, want ErrNotStarted", err)
	}
}
