package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStartInterruptedStopsWhatItStarted: a Start whose context ends
// while etcd is not yet ready returns the context's error, without a
// panic, and leaves no process behind.
func TestStartInterruptedStopsWhatItStarted(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "etcd.pid")
	// An etcd that never answers its health check.
	fake := filepath.Join(dir, "fake-etcd")
	script := "#!/bin/sh\necho $$ > " + pidFile + "\nexec sleep 600\n"
	if err := os.WriteFile(fake, []byte(script), 0o700); err != nil { //nolint:gosec // an executable for the test
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	// End the wait once the fake etcd runs.
	go func() {
		defer cancel()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for range tick.C {
			if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
				return
			}
		}
	}()
	cp, err := Start(ctx, Options{Binaries: Binaries{Etcd: fake, KubeAPIServer: fake}, Dir: dir})
	if cp != nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("Start: %v, %v; want nil and the context's error", cp, err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the fake etcd (pid %d) still exists after the interrupted Start: %v", pid, err)
	}
}
