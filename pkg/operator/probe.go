package operator

import (
	"log/slog"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/hook/batch"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// probeFailedPrefix starts the message of a module its readiness probe
// holds from Ready.
const probeFailedPrefix = "readiness probe failed: "

// isProbe reports whether ref is a binding of a module's readiness probe
// (a batch binary's "hook ready"), which runs on its own queue (see
// batch.ReadinessQueue).
func isProbe(ref binding.Ref) bool {
	h := ref.Hook
	return ref.Module != "" && ref.Sched != nil && batch.IsReadinessQueue(ref.Queue()) &&
		len(h.Args) == 2 && h.Args[0] == "hook" && h.Args[1] == batch.ReadinessID
}

// recordProbe lets a readiness probe's run decide its module's readiness:
// a failing probe takes a Ready module to Waiting, its message saying why;
// a passing one gives Ready back to a module its probe held, and wakes
// the modules that require it. A module that is running, failed or
// waiting for anything else keeps its phase: its run decides it. The
// probe's failure is not the module run's, and holds no queue: its next
// tick probes again.
func (o *Operator) recordProbe(ref binding.Ref, err error) {
	if !isProbe(ref) {
		return
	}
	woke := false
	o.state.update(ref.Module, func(s *moduleState) {
		held := s.Phase == status.PhaseWaiting && strings.HasPrefix(s.Message, probeFailedPrefix)
		switch {
		case err != nil && (s.Phase == status.PhaseReady || held):
			if !held {
				o.log.Warn("module not ready: its readiness probe failed", slog.String(logkey.Module, ref.Module), logkey.Err(err))
			}
			s.Phase, s.Message = status.PhaseWaiting, probeFailedPrefix+probeReason(err)
		case err == nil && held:
			o.log.Info("module ready: its readiness probe passed", slog.String(logkey.Module, ref.Module))
			s.Phase, s.Message, woke = status.PhaseReady, "", true
		}
	})
	if woke {
		o.wakeDependents(ref.Module)
	}
}

// probeReason is the last line of a probe's error: the module SDK writes
// {"message":"execute: <probe error>"} as the last line of stderr.
func probeReason(err error) string {
	msg := strings.TrimSpace(err.Error())
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = strings.TrimSpace(msg[i+1:])
	}
	const maxLen = 512
	if len(msg) > maxLen {
		msg = msg[:maxLen] + "…"
	}
	return msg
}
