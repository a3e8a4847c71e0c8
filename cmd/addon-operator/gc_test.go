package main

import (
	"bytes"
	"log/slog"
	"runtime/debug"
	"strings"
	"testing"
)

func TestApplyGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	tests := []struct {
		name    string
		percent int
		set     bool
		gogc    string // "" for unset
		want    int
		reason  string
	}{
		{"default", defaultGCPercent, false, "", defaultGCPercent, "reason=default"},
		{"GOGC wins over the default", defaultGCPercent, false, "100", 100, "reason=GOGC"},
		{"the flag wins over GOGC", 30, true, "100", 30, "reason=--gc-percent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetGCPercent(100) // as Go's runtime sets it, GOGC=100 or unset
			var out bytes.Buffer
			lookup := func(name string) (string, bool) {
				if name == "GOGC" && tt.gogc != "" {
					return tt.gogc, true
				}
				return "", false
			}
			applyGCPercent(slog.New(slog.NewTextHandler(&out, nil)), tt.percent, tt.set, lookup)
			if got := debug.SetGCPercent(100); got != tt.want {
				t.Errorf("GC percent = %d, want %d", got, tt.want)
			}
			if !strings.Contains(out.String(), tt.reason) {
				t.Errorf("log %q does not say %s", out.String(), tt.reason)
			}
		})
	}
}
