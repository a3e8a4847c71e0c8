package ha

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/addon-operator/addon-operator/e2e/operatortest"
)

// leaseName is the default of --ha-lease-name.
const leaseName = "addon-operator-leader-election"

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
	*operatortest.Harness
	dir    string
	timing timing
}

func newGroup(t *testing.T, tm timing) *group {
	t.Helper()
	g := &group{Harness: operatortest.New(t, cp, bin), dir: t.TempDir(), timing: tm}
	for _, d := range []string{"modules", "global-hooks"} {
		if err := os.Mkdir(filepath.Join(g.dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// start runs a replica of the operator with --ha and the group's timing.
func (g *group) start(identity string) *replica {
	g.T.Helper()
	op := g.Start(operatortest.Options{
		Name:           identity,
		ModulesDir:     filepath.Join(g.dir, "modules"),
		GlobalHooksDir: filepath.Join(g.dir, "global-hooks"),
		Args:           append([]string{"--ha", "--ha-identity=" + identity}, g.timing.flags()...),
	})
	return &replica{Operator: op, t: g.T, identity: identity}
}

// lease returns the election Lease, nil while it does not exist.
func (g *group) lease() *coordinationv1.Lease {
	g.T.Helper()
	l, err := g.Client.CoordinationV1().Leases(g.Namespace).Get(g.T.Context(), leaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		g.T.Fatalf("get lease: %v", err)
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

// waitLed waits until r holds the Lease and returns when it acquired it,
// by r's clock, as the Lease records it.
func (g *group) waitLed(r *replica) time.Time {
	g.T.Helper()
	var at time.Time
	g.Poll("replica "+r.identity+" to hold the lease", func() bool {
		l := g.lease()
		if l == nil || ptr.Deref(l.Spec.HolderIdentity, "") != r.identity || l.Spec.AcquireTime == nil {
			return false
		}
		at = l.Spec.AcquireTime.Time
		return true
	})
	return at
}

// replica is one operator process of a group. Its log holds JSON lines
// and, when it fails, cobra's error.
type replica struct {
	*operatortest.Operator
	t        *testing.T
	identity string
}

// running reports whether the process has not exited yet.
func (r *replica) running() bool {
	select {
	case <-r.Exited():
		return false
	default:
		return true
	}
}

// find returns the time of the first JSON log line with the message whose
// attributes are exactly those in want.
func (r *replica) find(msg string, want map[string]string) (time.Time, bool) {
	r.t.Helper()
	for _, l := range r.Log().Lines() {
		if l.Msg != msg || !hasAttrs(l, want) {
			continue
		}
		if l.Time.IsZero() {
			r.t.Fatalf("log line %v: no time", l.Fields)
		}
		return l.Time, true
	}
	return time.Time{}, false
}

func hasAttrs(l operatortest.Line, want map[string]string) bool {
	for k, v := range want {
		if l.Attr(k) != v {
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
	operatortest.Poll(r.t, fmt.Sprintf("replica %s to log %q with %v", r.identity, msg, want), func() bool {
		var ok bool
		at, ok = r.find(msg, want)
		return ok
	})
	return at
}

// waitConverged waits until the replica's metrics count a converge, which
// only a leader runs (a standby's /readyz answers 200 too), and returns
// when it saw that.
func (r *replica) waitConverged() time.Time {
	r.t.Helper()
	r.WaitMetric("addon_operator_converges_total", nil, "to count a converge of "+r.identity, operatortest.AtLeast(1))
	return time.Now()
}

// exitCode waits for the replica to exit and returns its exit status.
func (r *replica) exitCode() int {
	r.t.Helper()
	err := r.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		r.t.Fatalf("replica %s: wait: %v", r.identity, err)
	}
	return 0
}

// transitions returns the Lease's count of leader changes.
func transitions(l *coordinationv1.Lease) int32 {
	if l == nil || l.Spec.LeaseTransitions == nil {
		return 0
	}
	return *l.Spec.LeaseTransitions
}
