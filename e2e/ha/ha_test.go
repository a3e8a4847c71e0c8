package ha

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// slack is what a loaded two-core machine may add to a takeover on top of
// the election's own bound: process scheduling, API latency, the converge.
const slack = 15 * time.Second

// shortTiming are the durations of tests that wait for a lease to expire.
func shortTiming() timing {
	return timing{lease: 4 * time.Second, renew: 3 * time.Second, retry: time.Second}
}

// waitLeader waits until one of the replicas holds the Lease and has
// converged, checks that the other has not, and returns leader and standby.
func waitLeader(g *group, a, b *replica) (leader, standby *replica) {
	g.T.Helper()
	g.Poll("a replica to lead", func() bool {
		switch g.holder() {
		case a.identity:
			leader, standby = a, b
		case b.identity:
			leader, standby = b, a
		default:
			return false
		}
		return true
	})
	leader.waitConverged()
	// The standby has seen the leader, so it has been trying to take over.
	standby.waitLog("new leader", map[string]string{"identity": leader.identity, "name": leaseName, "namespace": g.Namespace})
	assertStandby(g.T, standby)
	return leader, standby
}

// assertStandby checks that the replica has never worked.
func assertStandby(t *testing.T, r *replica) {
	t.Helper()
	for _, msg := range []string{"started leading", "first converge done"} {
		if r.logged(msg) {
			t.Fatalf("standby %s logged %q", r.identity, msg)
		}
	}
}

// waitHeldFor waits until the current holder has renewed the Lease for
// longer than d since acquiring it.
func waitHeldFor(g *group, d time.Duration) {
	g.T.Helper()
	g.Poll(fmt.Sprintf("the lease to be held for %s", d), func() bool {
		l := g.lease()
		return l != nil && l.Spec.AcquireTime != nil && l.Spec.RenewTime != nil && l.Spec.RenewTime.Sub(l.Spec.AcquireTime.Time) > d
	})
}

func TestStandbyTakesOverFromKilledLeader(t *testing.T) {
	short := shortTiming()
	g := newGroup(t, short)
	a, b := g.start("replica-a"), g.start("replica-b")
	leader, standby := waitLeader(g, a, b)
	// A standby that could steal the Lease would have done so by now.
	waitHeldFor(g, short.lease+2*short.retry)
	assertStandby(t, standby)
	if got := g.holder(); got != leader.identity {
		t.Fatalf("holder = %q, want %s", got, leader.identity)
	}
	before := transitions(g.lease())

	killed := time.Now()
	leader.Kill()
	started := g.waitLed(standby)
	converged := standby.waitConverged()
	took, ready := started.Sub(killed), converged.Sub(killed)
	t.Logf("SIGKILL to leading %s, to first converge done %s (lease %s, retry %s)", took, ready, short.lease, short.retry)

	// The dead leader's last renewal was at most one retry period before
	// the kill: the standby must wait out the rest of the lease, then it
	// tries every retry period plus up to 1.2 periods of jitter.
	if earliest := short.lease - short.retry; took < earliest {
		t.Errorf("standby led %s after the kill, before the lease could expire (%s)", took, earliest)
	}
	if latest := short.lease + short.retry*22/10 + slack; ready > latest {
		t.Errorf("standby converged %s after the kill, want within %s", ready, latest)
	}
	l := g.lease()
	if got := ptr.Deref(l.Spec.HolderIdentity, ""); got != standby.identity {
		t.Errorf("holder = %q, want %s", got, standby.identity)
	}
	if got := transitions(l); got != before+1 {
		t.Errorf("lease transitions = %d, want %d", got, before+1)
	}
}

func TestLeaderHandsOverOnSIGTERM(t *testing.T) {
	// A lease long enough that a quick takeover proves it was released.
	long := timing{lease: 30 * time.Second, renew: 20 * time.Second, retry: time.Second}
	g := newGroup(t, long)
	a, b := g.start("replica-a"), g.start("replica-b")
	leader, standby := waitLeader(g, a, b)

	termed := time.Now()
	leader.Signal(syscall.SIGTERM)
	if err := leader.Wait(); err != nil {
		t.Fatalf("leader exited with %v after SIGTERM, want 0", err)
	}
	stopped, ok := leader.find("stopped leading", nil)
	if !ok {
		t.Fatal(`leader did not log "stopped leading"`)
	}
	started := g.waitLed(standby)
	converged := standby.waitConverged()
	t.Logf("SIGTERM to leading %s, to first converge done %s (lease %s)", started.Sub(termed), converged.Sub(termed), long.lease)
	if took := started.Sub(termed); took >= long.lease {
		t.Errorf("standby led %s after SIGTERM, not before the lease expired: it was not released", took)
	}
	if started.Before(stopped) {
		t.Errorf("standby started leading at %s, before the old leader stopped at %s", started, stopped)
	}
	if got := g.holder(); got != standby.identity {
		t.Errorf("holder = %q, want %s", got, standby.identity)
	}
}

func TestLeaderExitsWhenLeaseIsTaken(t *testing.T) {
	short := shortTiming()
	g := newGroup(t, short)
	a, b := g.start("replica-a"), g.start("replica-b")
	leader, standby := waitLeader(g, a, b)

	// Another holder takes the Lease, as after a partition in which this
	// leader could not renew.
	var taken time.Time
	leases := g.Client.CoordinationV1().Leases(g.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l, err := leases.Get(t.Context(), leaseName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		taken = time.Now()
		now := metav1.NewMicroTime(taken)
		l.Spec.HolderIdentity, l.Spec.AcquireTime, l.Spec.RenewTime = ptr.To("intruder"), &now, &now
		l.Spec.LeaseTransitions = ptr.To(transitions(l) + 1)
		_, err = leases.Update(t.Context(), l, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("take the lease: %v", err)
	}

	code := leader.exitCode() // waits for the exit
	exited := time.Now()
	t.Logf("lease taken to leader exit %s (renew deadline %s)", exited.Sub(taken), short.renew)
	if code == 0 {
		t.Errorf("leader exited with 0 after losing the lease, want an error")
	}
	if want := fmt.Sprintf("lease %s/%s: leadership lost", g.Namespace, leaseName); !strings.Contains(leader.Log().String(), want) {
		t.Errorf("leader output lacks %q", want)
	}
	if latest := short.renew + short.retry + slack; exited.Sub(taken) > latest {
		t.Errorf("leader exited %s after losing the lease, want within %s", exited.Sub(taken), latest)
	}

	// The intruder never renews; the standby waits out its lease.
	started := g.waitLed(standby)
	standby.waitConverged()
	if took := started.Sub(taken); took < short.lease {
		t.Errorf("standby led %s after the lease was taken, before it expired (%s)", took, short.lease)
	}
	if !standby.running() {
		t.Error("standby exited")
	}
}
