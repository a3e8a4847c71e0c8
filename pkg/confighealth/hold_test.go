package confighealth

import (
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// holdEvents records the ConfigHeld Events asked for.
type holdEvents struct{ held []string }

func (*holdEvents) ConfigMapDeleted(bool)          {}
func (*holdEvents) ConfigMapRecreated()            {}
func (*holdEvents) ConfigRejected([]string, error) {}
func (e *holdEvents) ConfigHeld(reason, _ string)  { e.held = append(e.held, reason) }

func TestHold(t *testing.T) {
	ev := &holdEvents{}
	tr := New(Options{Namespace: "ns", Name: "cm", KeepDeleted: true, Clock: clocktesting.NewFakeClock(time.Now()),
		Logger: slog.New(slog.DiscardHandler), Events: ev})
	tr.Hold(config.HoldConfigMapMissing, "note")
	tr.Hold(config.HoldConfigMapMissing, "note again")
	if !tr.KeepsDeleted() {
		t.Error("a write creates the ConfigMap while a missing one is held")
	}
	cs := tr.Conditions()
	if len(cs) != 1 || cs[0].Type != status.ConditionConfigHeld || cs[0].Reason != config.HoldConfigMapMissing ||
		cs[0].Message != config.HoldConfigMapMissing+": note again" {
		t.Errorf("conditions = %+v, want one ConfigHeld with the reason and the latest note", cs)
	}
	tr.Hold(config.HoldEmptyUnconfirmed, "note")
	if tr.KeepsDeleted() {
		t.Error("an existing but empty ConfigMap counts as deleted")
	}
	tr.Release()
	if tr.Held() != "" || len(tr.Conditions()) != 0 {
		t.Errorf("after Release: held %q, conditions %+v", tr.Held(), tr.Conditions())
	}
	if diff := cmp.Diff([]string{config.HoldConfigMapMissing, config.HoldEmptyUnconfirmed}, ev.held); diff != "" {
		t.Errorf("Events, one per new reason (-want +got):\n%s", diff)
	}
}
