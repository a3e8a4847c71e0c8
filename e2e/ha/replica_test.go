package ha

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

const (
	// waitTimeout bounds every wait for a replica to do something.
	waitTimeout = 60 * time.Second
	// leaseName is the default of --ha-lease-name.
	leaseName = "addon-operator-leader"
)

// timing are the --ha durations of one test.
type timing struct {
	lease, renew, retry time.Duration
}

func (tm timing) flags() []string {
	return []string{
		"--ha-lease-duration=" + tm.lease.String(),
		"--ha-renew-deadline=" + tm.renew.String(),
		"--ha-retry-period=" + tm.retry.String(),
	}
}

// group is a set of replicas sharing one namespace, one empty modules
// directory and one Lease.
type group struct {
	t      *testing.T
	ns     string
	dir    string
	client kubernetes.Interface
	timing timing
}

func newGroup(t *testing.T, tm timing) *group {
	t.Helper()
	g := &group{t: t, ns: cp.Namespace(t), dir: t.TempDir(), client: cp.Clientset(t), timing: tm}
	for _, d := range []string{"modules", "global-hooks"} {
		if err := os.Mkdir(filepath.Join(g.dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// start runs a replica of the operator with --ha and the group's timing.
func (g *group) start(identity string) *replica {
	g.t.Helper()
	r := &replica{t: g.t, identity: identity, logs: filepath.Join(g.dir, identity+".log"), exited: make(chan struct{})}
	logs, err := os.Create(r.logs)
	if err != nil {
		g.t.Fatal(err)
	}
	defer func() { _ = logs.Close() }()
	args := append([]string{"start", "--ha", "--ha-identity=" + identity,
		"--log-type=json", "--log-level=debug", "--tmp-dir=" + filepath.Join(g.dir, identity+"-tmp"),
	}, g.timing.flags()...)
	// The replica outlives t.Context(): stop() ends it from a cleanup.
	cmd := exec.CommandContext(context.WithoutCancel(g.t.Context()), bin, args...)
	cmd.Env = append(os.Environ(),
		"ADDON_OPERATOR_MODULES_DIR="+filepath.Join(g.dir, "modules"),
		"ADDON_OPERATOR_GLOBAL_HOOKS_DIR="+filepath.Join(g.dir, "global-hooks"),
		"ADDON_OPERATOR_NAMESPACE="+g.ns,
		"KUBECONFIG="+cp.Kubeconfig,
		// Replicas share a host here, unlike pods: give each its own HTTP
		// port and debug socket once the binary serves them.
		"ADDON_OPERATOR_LISTEN_ADDRESS=127.0.0.1:0",
		"ADDON_OPERATOR_DEBUG_SOCKET="+filepath.Join(g.dir, identity+".sock"),
	)
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		g.t.Fatalf("start replica %s: %v", identity, err)
	}
	r.proc = cmd
	go func() {
		r.err = cmd.Wait()
		close(r.exited)
	}()
	g.t.Cleanup(r.stop)
	return r
}

// lease returns the election Lease, nil while it does not exist.
func (g *group) lease() *coordinationv1.Lease {
	g.t.Helper()
	l, err := g.client.CoordinationV1().Leases(g.ns).Get(g.t.Context(), leaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		g.t.Fatalf("get lease: %v", err)
	}
	return l
}

// holder returns the Lease's holder identity, "" without a holder.
func (g *group) holder() string {
	if l := g.lease(); l != nil && l.Spec.HolderIdentity != nil {
		return *l.Spec.HolderIdentity
	}
	return ""
}

// replica is one operator process.
type replica struct {
	t        *testing.T
	identity string
	logs     string // its stdout and stderr: JSON log lines and cobra's error
	proc     *exec.Cmd
	exited   chan struct{}
	err      error // the result of Wait, set before exited is closed
}

// kill sends SIGKILL and waits for the process to end.
func (r *replica) kill() {
	r.t.Helper()
	_ = r.proc.Process.Kill()
	r.wait()
}

// term sends SIGTERM and returns the process's exit error.
func (r *replica) term() error {
	r.t.Helper()
	_ = r.proc.Process.Signal(syscall.SIGTERM)
	r.wait()
	return r.err
}

// wait waits for the process to end by itself.
func (r *replica) wait() {
	r.t.Helper()
	select {
	case <-r.exited:
	case <-time.After(waitTimeout):
		r.t.Fatalf("replica %s still runs after %s", r.identity, waitTimeout)
	}
}

// stop ends the process if it still runs and prints its log when the test
// failed.
func (r *replica) stop() {
	select {
	case <-r.exited:
	default:
		_ = r.proc.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(waitTimeout):
			_ = r.proc.Process.Kill()
			<-r.exited
			r.t.Errorf("replica %s did not stop within %s of SIGTERM", r.identity, waitTimeout)
		}
	}
	if r.t.Failed() {
		data, _ := os.ReadFile(r.logs)
		r.t.Logf("replica %s log:\n%s", r.identity, data)
	}
}

// running reports whether the process has not exited yet.
func (r *replica) running() bool {
	select {
	case <-r.exited:
		return false
	default:
		return true
	}
}

// output returns everything the replica wrote.
func (r *replica) output() string {
	r.t.Helper()
	data, err := os.ReadFile(r.logs)
	if err != nil {
		r.t.Fatal(err)
	}
	return string(data)
}

// find returns the time of the first JSON log line with the message whose
// attributes include want.
func (r *replica) find(msg string, want map[string]string) (time.Time, bool) {
	r.t.Helper()
	sc := bufio.NewScanner(bytes.NewReader([]byte(r.output())))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l map[string]any
		if json.Unmarshal(sc.Bytes(), &l) != nil || l["msg"] != msg || !hasAttrs(l, want) {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(l["time"]))
		if err != nil {
			r.t.Fatalf("log line %s: time: %v", sc.Text(), err)
		}
		return at, true
	}
	return time.Time{}, false
}

func hasAttrs(l map[string]any, want map[string]string) bool {
	for k, v := range want {
		if fmt.Sprint(l[k]) != v {
			return false
		}
	}
	return true
}

// logged reports whether the replica logged the message.
func (r *replica) logged(msg string) bool {
	_, ok := r.find(msg, nil)
	return ok
}

// waitLog waits for a log line and returns its time.
func (r *replica) waitLog(msg string, want map[string]string) time.Time {
	r.t.Helper()
	var at time.Time
	poll(r.t, fmt.Sprintf("replica %s to log %q with %v", r.identity, msg, want), func() bool {
		var ok bool
		at, ok = r.find(msg, want)
		return ok
	})
	return at
}

// exitCode returns the exit status of an ended replica.
func (r *replica) exitCode() int {
	var exit *exec.ExitError
	if errors.As(r.err, &exit) {
		return exit.ExitCode()
	}
	if r.err != nil {
		r.t.Fatalf("replica %s: wait: %v", r.identity, r.err)
	}
	return 0
}

// poll calls cond until it holds or waitTimeout passes.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

// transitions returns the Lease's count of leader changes.
func transitions(l *coordinationv1.Lease) int32 {
	if l == nil || l.Spec.LeaseTransitions == nil {
		return 0
	}
	return *l.Spec.LeaseTransitions
}
