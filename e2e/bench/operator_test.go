package bench

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckOperatorArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr bool
	}{
		{"none", nil, false},
		{"rate limit", []string{"--kube-client-qps=20", "--kube-client-burst=10"}, false},
		{"flag and value apart", []string{"--kube-client-qps", "20"}, false},
		{"log format the harness reads", []string{"--log-type=text"}, true},
		{"listener the harness scrapes", []string{"--listen-address", "0.0.0.0:9650"}, true},
		{"single dash", []string{"-module-workers=8"}, true},
		{"debug socket", []string{"--debug-socket="}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := CheckOperatorArgs(tt.args); (err != nil) != tt.wantErr {
				t.Errorf("CheckOperatorArgs(%q) = %v, want error %v", tt.args, err, tt.wantErr)
			}
		})
	}
}

func TestDebugSocket(t *testing.T) {
	short := t.TempDir()
	path, cleanup, err := debugSocket(short)
	if err != nil || path != filepath.Join(short, "debug.socket") {
		t.Errorf("short dir: socket %q, %v; want it in %s", path, err, short)
	}
	cleanup()

	long := filepath.Join(short, strings.Repeat("n", 120))
	path, cleanup, err = debugSocket(long)
	if err != nil {
		t.Fatal(err)
	}
	if len(path) > maxSocketPath || strings.HasPrefix(path, long) {
		t.Errorf("long dir: socket %q, want a short path elsewhere", path)
	}
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		t.Errorf("socket dir: %v", err)
	}
	cleanup()
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket dir after cleanup: %v, want it removed", err)
	}

	longTmp := filepath.Join(short, strings.Repeat("t", 120))
	if err := os.Mkdir(longTmp, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", longTmp)
	if _, _, err := debugSocket(long); err == nil {
		t.Error("long dir and long TMPDIR: no error")
	}
	if entries, _ := os.ReadDir(longTmp); len(entries) != 0 {
		t.Errorf("long TMPDIR keeps %d entries, want none", len(entries))
	}
}
