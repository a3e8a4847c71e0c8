package main

import (
	"log/slog"
	"runtime/debug"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// defaultGCPercent is the garbage collector's target unless GOGC or
// --gc-percent says otherwise: the heap grows half the live heap between
// collections, not Go's default of the whole of it. An operator's memory is
// reserved for it all the time while its CPU is spent in bursts; at 1000
// modules this held the peak at 202 MB instead of 248 MB for 2-3 s more
// CPU over a 28 s converge, which took as long (docs/benchmarks.md).
const defaultGCPercent = 50

// applyGCPercent sets the garbage collector's target: percent when given
// (set is true when the flag or its environment variable was), else
// defaultGCPercent unless GOGC is set, which Go's runtime has applied
// already. It logs the target in force and where it comes from.
func applyGCPercent(log *slog.Logger, percent int, set bool, lookup func(string) (string, bool)) {
	switch gogc, ok := lookup("GOGC"); {
	case set:
		debug.SetGCPercent(percent)
		log.Info("garbage collector target", slog.Int(logkey.Percent, percent), slog.String(logkey.Reason, "--gc-percent"))
	case ok:
		log.Info("garbage collector target", slog.String(logkey.Percent, gogc), slog.String(logkey.Reason, "GOGC"))
	default:
		debug.SetGCPercent(defaultGCPercent)
		log.Info("garbage collector target", slog.Int(logkey.Percent, defaultGCPercent), slog.String(logkey.Reason, "default"))
	}
}
