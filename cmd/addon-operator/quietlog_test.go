package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

func TestOutageQuietLowersClientGoLogsDuringAnOutage(t *testing.T) {
	tests := []struct {
		name  string
		level slog.Level // of the operator's logger
		down  bool
		want  []string
	}{
		{name: "up", level: slog.LevelInfo, want: []string{"level=ERROR msg=\"Failed to watch\" component=client-go", "level=WARN msg=retrying component=client-go"}},
		{name: "down", level: slog.LevelInfo, down: true},
		{name: "down at debug level", level: slog.LevelDebug, down: true, want: []string{
			"level=DEBUG msg=\"Failed to watch\" component=client-go", "level=DEBUG msg=retrying component=client-go",
			"level=DEBUG msg=detail component=client-go",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			inner := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tt.level, ReplaceAttr: dropTime})
			log := slog.New(outageQuiet{inner, func() bool { return tt.down }}).With(slog.String(logkey.Component, "client-go"))
			log.Error("Failed to watch")
			log.Warn("retrying")
			log.Debug("detail")
			var got []string
			for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
				if line != "" {
					got = append(got, line)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
		})
	}
}

func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
