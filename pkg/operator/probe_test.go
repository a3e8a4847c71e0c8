package operator

import (
	"errors"
	"strings"
	"testing"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/hook/batch"
	"github.com/addon-operator/addon-operator/pkg/status"
)

func TestReadinessProbeDecidesModuleReadiness(t *testing.T) {
	var probeErr error
	runner := &fakeRunner{fail: func(call string) error {
		if call == "a:probe" {
			return probeErr
		}
		return nil
	}}
	o, _ := newTestOperator(t, runner)
	probe := binding.Ref{
		Module: "a",
		Hook:   &binding.Hook{Path: "/m/010-a/hooks/batch", Args: []string{"hook", hook.ReadinessID}, Name: "batch:ready", Config: &hook.Config{}},
		Sched:  &hook.ScheduleBinding{Name: "probe", Queue: batch.ReadinessQueue("/m/010-a/hooks/batch"), AllowFailure: true},
	}
	o.state.update("a", func(s *moduleState) { s.Enabled, s.Phase = true, status.PhaseReady })
	phase := func() (status.Phase, string) {
		st := o.state.get("a")
		return st.Phase, st.Message
	}

	// A failing probe makes a Ready module Waiting, saying why, and is
	// allowed to fail: nothing is retried.
	probeErr = errors.New("exit code 1: {\"message\":\"execute: get module resource: not found\"}\n{\"message\":\"execute: pods not ready\"}")
	if _, err := o.runRefHook(t.Context(), probe, nil); err != nil {
		t.Fatalf("probe run returned %v, want its failure allowed", err)
	}
	if p, msg := phase(); p != status.PhaseWaiting || msg != probeFailedPrefix+`{"message":"execute: pods not ready"}` {
		t.Fatalf("phase %s, message %q", p, msg)
	}
	// Still failing: still Waiting.
	if _, err := o.runRefHook(t.Context(), probe, nil); err != nil {
		t.Fatal(err)
	}
	if p, _ := phase(); p != status.PhaseWaiting {
		t.Fatalf("phase %s after a second failure", p)
	}
	// Passing: Ready again.
	probeErr = nil
	if _, err := o.runRefHook(t.Context(), probe, nil); err != nil {
		t.Fatal(err)
	}
	if p, msg := phase(); p != status.PhaseReady || msg != "" {
		t.Fatalf("phase %s, message %q after the probe passed", p, msg)
	}

	// A module running or failed keeps its phase: its run decides it.
	for _, p := range []status.Phase{status.PhaseRunning, status.PhaseFailed} {
		o.state.update("a", func(s *moduleState) { s.Phase, s.Message = p, "" })
		probeErr = errors.New("exit code 1")
		if _, err := o.runRefHook(t.Context(), probe, nil); err != nil {
			t.Fatal(err)
		}
		if got, msg := phase(); got != p || strings.HasPrefix(msg, probeFailedPrefix) {
			t.Errorf("phase %s became %s (%q)", p, got, msg)
		}
	}

	// Another hook of the module, even on a readiness-like queue, is no probe.
	other := probe
	other.Hook = &binding.Hook{Path: "/m/010-a/hooks/batch", Args: []string{"hook", "run", "0"}, Name: "batch:x:0", Config: &hook.Config{}}
	if isProbe(other) || !isProbe(probe) {
		t.Error("isProbe confuses a hook with the probe")
	}
	other = probe
	other.Sched = &hook.ScheduleBinding{Name: "probe", Queue: "main"}
	if isProbe(other) {
		t.Error("a probe binding on main is taken for a probe")
	}
}
