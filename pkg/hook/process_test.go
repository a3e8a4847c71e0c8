package hook

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.After(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("%s: not within %s", what, timeout)
		case <-tick.C:
		}
	}
}

// readPid returns the pid a script wrote to file, or 0 if not yet written.
func readPid(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Clean(file))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(data), "\n") {
		return 0 // still being written
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("pid file %q: %v", data, err)
	}
	return pid
}

// gone reports whether pid no longer runs. A killed orphan may linger as a
// zombie until its new parent reaps it; a zombie runs no code, so it counts.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// The state follows the parenthesized command name.
	_, after, ok := strings.Cut(string(stat), ") ")
	return ok && strings.HasPrefix(after, "Z")
}

func TestRunKillsProcessGroup(t *testing.T) {
	tests := []struct {
		name string
		// script starts a grandchild, writes its pid to $TEST_OUT/pid and
		// then keeps running or exits.
		script  string
		cancel  bool // cancel the parent context once the pid is written
		timeout time.Duration
		check   func(t *testing.T, err error)
	}{
		{
			name:    "timeout, hook obeys SIGTERM",
			script:  "sleep 60 &\necho $! > \"$TEST_OUT/pid\"\nwait\n",
			timeout: time.Second,
			check:   wantTimeout("timed out after 1s"),
		},
		{
			name:    "timeout, hook ignores SIGTERM",
			script:  "trap '' TERM\nsleep 60 &\necho $! > \"$TEST_OUT/pid\"\nwhile :; do wait; done\n",
			timeout: time.Second,
			check:   wantTimeout("timed out after 1s"),
		},
		{
			name:   "parent context cancelled",
			script: "sleep 60 &\necho $! > \"$TEST_OUT/pid\"\nwait\n",
			cancel: true,
			check: func(t *testing.T, err error) {
				t.Helper()
				if !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
					t.Errorf("error %v, want context.Canceled and not ErrTimeout", err)
				}
			},
		},
		{
			name:   "hook exits leaving a background child on its output",
			script: "sleep 60 &\necho $! > \"$TEST_OUT/pid\"\nexit 0\n",
			check: func(t *testing.T, err error) {
				t.Helper()
				if err != nil {
					t.Errorf("error %v, want success", err)
				}
			},
		},
		{
			name:   "hook exits leaving a detached background child",
			script: "sleep 60 >/dev/null 2>&1 &\necho $! > \"$TEST_OUT/pid\"\nexit 0\n",
			check: func(t *testing.T, err error) {
				t.Helper()
				if err != nil {
					t.Errorf("error %v, want success", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, out, _ := testExecutor(t)
			path := writeScript(t, t.TempDir(), "hook.sh", tt.script)
			pidFile := filepath.Join(out, "pid")
			start := time.Now()
			err := runCancellable(t, e, Run{Path: path, Timeout: tt.timeout}, tt.cancel, pidFile)
			elapsed := time.Since(start)
			tt.check(t, err)
			if elapsed > 5*time.Second {
				t.Errorf("run took %s, want it bounded by timeout plus grace", elapsed)
			}
			pid := readPid(t, pidFile)
			if pid == 0 {
				t.Fatal("the script did not record its grandchild's pid")
			}
			waitFor(t, fmt.Sprintf("grandchild %d gone", pid), 5*time.Second, func() bool { return gone(pid) })
			assertNoRunDirs(t, e)
		})
	}
}

// runCancellable runs r; with cancel set it cancels the run's context as soon
// as the script has written pidFile.
func runCancellable(t *testing.T, e *Executor, r Run, cancel bool, pidFile string) error {
	t.Helper()
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	errc := make(chan error, 1)
	go func() {
		_, err := e.Run(ctx, r)
		errc <- err
	}()
	if cancel {
		waitFor(t, "grandchild started", 5*time.Second, func() bool { return readPid(t, pidFile) != 0 })
		stop()
	}
	return <-errc
}

func wantTimeout(text string) func(t *testing.T, err error) {
	return func(t *testing.T, err error) {
		t.Helper()
		if !errors.Is(err, ErrTimeout) {
			t.Fatalf("error %v, want ErrTimeout", err)
		}
		if err.Error() != text {
			t.Errorf("error %q, want %q", err, text)
		}
	}
}

// TestRunEndsWhenTheHookExits: background processes hold the hook's output
// open after it exited, one in its process group and one detached with
// setsid, as another run's process may hold it for the moment of its exec.
// The run ends then, not after the wait delay, with every line the hook
// wrote, more than a pipe holds, logged in order.
func TestRunEndsWhenTheHookExits(t *testing.T) {
	e, out, logs := testExecutor(t)
	e.WaitDelay = time.Minute
	const lines = 5000 // about 190 kB, three times a pipe's buffer
	script := `i=0
while [ $i -lt ` + strconv.Itoa(lines) + ` ]; do echo "line $i of the hook's standard output"; i=$((i+1)); done
printf 'last line on stderr, no newline' >&2
sleep 60 &
echo $! > "$TEST_OUT/grouped"
setsid sh -c 'echo $$ > "$TEST_OUT/detached.tmp" && mv "$TEST_OUT/detached.tmp" "$TEST_OUT/detached" && exec sleep 60' &
while [ ! -s "$TEST_OUT/detached" ]; do sleep 0.01; done
`
	path := writeScript(t, t.TempDir(), "hook.sh", script)
	start := time.Now()
	_, err := e.Run(t.Context(), Run{Path: path, Kind: RunHook})
	elapsed := time.Since(start)
	detached := readPid(t, filepath.Join(out, "detached"))
	if detached != 0 {
		t.Cleanup(func() { _ = syscall.Kill(detached, syscall.SIGKILL) })
	}
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if detached == 0 || gone(detached) {
		t.Fatal("the detached process did not outlive the run; the test shows nothing")
	}
	if elapsed >= e.WaitDelay/2 {
		t.Errorf("run took %s: it waited for the end of output held by background processes", elapsed)
	}
	grouped := readPid(t, filepath.Join(out, "grouped"))
	waitFor(t, fmt.Sprintf("background process %d in the hook's group gone", grouped), 5*time.Second, func() bool { return gone(grouped) })
	var got []string
	for _, rec := range logs.records(t) {
		if rec["msg"] == "hook output" {
			got = append(got, rec["stream"].(string)+": "+rec["line"].(string))
		}
	}
	want := make([]string, 0, lines+1)
	for i := range lines {
		want = append(want, fmt.Sprintf("stdout: line %d of the hook's standard output", i))
	}
	want = append(want, "stderr: last line on stderr, no newline")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("logged lines (-want +got):\n%s", diff)
	}
}
