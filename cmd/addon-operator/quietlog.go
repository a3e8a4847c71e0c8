package main

import (
	"context"
	"log/slog"
)

// outageQuiet is the handler of client-go's logs (klog bridged into slog).
// While the API server is unreachable, client-go complains about every
// failed request and watch, again and again; the outage's own two lines
// (apihealth) stand for all of it, so those records drop to debug level.
type outageQuiet struct {
	slog.Handler
	down func() bool
}

func (h outageQuiet) Handle(ctx context.Context, r slog.Record) error {
	if r.Level > slog.LevelDebug && h.down() {
		if !h.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		r.Level = slog.LevelDebug
	}
	return h.Handler.Handle(ctx, r)
}

func (h outageQuiet) WithAttrs(attrs []slog.Attr) slog.Handler {
	return outageQuiet{h.Handler.WithAttrs(attrs), h.down}
}

func (h outageQuiet) WithGroup(name string) slog.Handler {
	return outageQuiet{h.Handler.WithGroup(name), h.down}
}
