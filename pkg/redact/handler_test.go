package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

func TestHandler(t *testing.T) {
	r := New()
	r.Set("s", []string{"s3cr3t-value-1"})
	var buf bytes.Buffer
	log := slog.New(r.Handler(slog.NewJSONHandler(&buf, nil)))
	log.With(slog.String(logkey.Name, "with s3cr3t-value-1")).WithGroup(logkey.Module).Info("message s3cr3t-value-1",
		logkey.Err(errors.New(`Invalid value: "s3cr3t-value-1"`)),
		slog.Group(logkey.Hook, slog.String(logkey.Name, "s3cr3t-value-1")),
		slog.Int(logkey.Count, 3))
	out := buf.String()
	if strings.Contains(out, "s3cr3t-value-1") {
		t.Errorf("the log line shows the secret: %s", out)
	}
	if got := strings.Count(out, Marker); got != 4 {
		t.Errorf("%d markers, want 4: %s", got, out)
	}
	if !strings.Contains(out, `"count":3`) {
		t.Errorf("other attributes lost: %s", out)
	}
}
