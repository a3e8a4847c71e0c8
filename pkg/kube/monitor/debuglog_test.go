package monitor

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/go-logr/logr"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// client-go's lines about a monitor's informer, errors included, reach the
// log at debug level only: the monitor reports failures itself, once.
func TestInformerLogsAtDebug(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))
		l := logr.FromSlogHandler(debugHandler{log.With(slog.String(logkey.Binding, "b")).Handler()})
		l.Error(errors.New("connection refused"), "Failed to watch")
		l.Info("Caches populated")
		got := buf.String()
		if level == slog.LevelInfo {
			if got != "" {
				t.Errorf("at info level the log got %q, want nothing", got)
			}
			continue
		}
		lines := strings.Split(strings.TrimSpace(got), "\n")
		if len(lines) != 2 {
			t.Fatalf("at debug level got %d lines, want 2:\n%s", len(lines), got)
		}
		for _, line := range lines {
			if !strings.Contains(line, "level=DEBUG") || !strings.Contains(line, logkey.Binding+"=b") {
				t.Errorf("line %q: want level=DEBUG with the monitor's attributes", line)
			}
		}
		if !strings.Contains(lines[0], "connection refused") {
			t.Errorf("error line %q lost the error", lines[0])
		}
	}
	if (debugHandler{slog.DiscardHandler}).Enabled(context.Background(), slog.LevelError) {
		t.Error("Enabled over a handler that takes nothing: true")
	}
}
