package hook

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// countingScript is a hook that appends a line to a file next to it for
// every --config run, and prints its configuration with the ORDER given.
func countingScript(order string) string {
	return `if [ "$1" = --config ]; then echo run >>"$(dirname "$0")/runs"; printf 'configVersion: v1\nonStartup: ` + order + `\n'; exit 0; fi
exit 9
`
}

// configRuns counts the --config runs countingScript recorded in dir.
func configRuns(t *testing.T, dir string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "runs"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(data, []byte("run\n"))
}

func TestConfigUnchangedFileRunsOnce(t *testing.T) {
	e, _, _ := testExecutor(t)
	dir := t.TempDir()
	path := writeScript(t, dir, "hook.sh", countingScript("5"))
	for i := range 3 {
		data, err := e.Config(t.Context(), path)
		if err != nil {
			t.Fatalf("load %d: Config: %v", i, err)
		}
		if got, want := string(data), "configVersion: v1\nonStartup: 5\n"; got != want {
			t.Fatalf("load %d: config %q, want %q", i, got, want)
		}
	}
	if got := configRuns(t, dir); got != 1 {
		t.Errorf("--config ran %d times for three loads of an unchanged file, want 1", got)
	}
}

func TestConfigChangedFileRunsAgain(t *testing.T) {
	e, _, _ := testExecutor(t)
	dir := t.TempDir()
	path := writeScript(t, dir, "hook.sh", countingScript("5"))
	if _, err := e.Config(t.Context(), path); err != nil {
		t.Fatalf("Config: %v", err)
	}
	writeScript(t, dir, "hook.sh", countingScript("7"))
	data, err := e.Config(t.Context(), path)
	if err != nil {
		t.Fatalf("Config after the change: %v", err)
	}
	if !strings.Contains(string(data), "onStartup: 7") {
		t.Errorf("config after the file changed is %q, want the new file's (onStartup: 7)", data)
	}
	if got := configRuns(t, dir); got != 2 {
		t.Errorf("--config ran %d times, want 2: once per content", got)
	}
	// Back to the first content: only the last content is remembered.
	writeScript(t, dir, "hook.sh", countingScript("5"))
	data, err = e.Config(t.Context(), path)
	if err != nil || !strings.Contains(string(data), "onStartup: 5") {
		t.Fatalf("config back at the first content: %q, %v; want onStartup: 5", data, err)
	}
	if got := configRuns(t, dir); got != 3 {
		t.Errorf("--config ran %d times, want 3", got)
	}
}

// TestConfigSameContentOtherPathRuns: a hook's configuration may depend
// on its path, so an identical file elsewhere is run too.
func TestConfigSameContentOtherPathRuns(t *testing.T) {
	e, _, _ := testExecutor(t)
	dir := t.TempDir()
	a := writeScript(t, dir, "a.sh", countingScript("5"))
	b := writeScript(t, dir, "b.sh", countingScript("5"))
	for _, p := range []string{a, b} {
		if _, err := e.Config(t.Context(), p); err != nil {
			t.Fatalf("Config %s: %v", p, err)
		}
	}
	if got := configRuns(t, dir); got != 2 {
		t.Errorf("--config ran %d times for two paths, want 2", got)
	}
}

func TestConfigFailureNotRemembered(t *testing.T) {
	e, _, _ := testExecutor(t)
	dir := t.TempDir()
	// Fails until the file "ok" exists next to it.
	path := writeScript(t, dir, "hook.sh", `echo run >>"$(dirname "$0")/runs"
[ -e "$(dirname "$0")/ok" ] || exit 3
echo 'configVersion: v1'
`)
	if _, err := e.Config(t.Context(), path); err == nil {
		t.Fatal("Config of a failing hook succeeded")
	}
	if err := os.WriteFile(filepath.Join(dir, "ok"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Config(t.Context(), path); err != nil {
		t.Fatalf("Config after the cause was fixed: %v; a failure must not be remembered", err)
	}
	if got := configRuns(t, dir); got != 2 {
		t.Errorf("--config ran %d times, want 2", got)
	}
}

// TestConfigConcurrentLoadsShareARun: loads of one file at the same time
// start one process. The process reads a FIFO the test writes once every
// load has started: a second process would wait on it until its timeout.
func TestConfigConcurrentLoadsShareARun(t *testing.T) {
	e, _, _ := testExecutor(t)
	e.Timeout = 30 * time.Second
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	path := writeScript(t, dir, "hook.sh", `echo run >>"$(dirname "$0")/runs"
read -r _ <"$(dirname "$0")/fifo"
echo 'configVersion: v1'
`)
	const loads = 8
	var wg sync.WaitGroup
	errs := make(chan error, loads)
	var started sync.WaitGroup
	started.Add(loads)
	for range loads {
		wg.Go(func() {
			started.Done()
			_, err := e.Config(t.Context(), path)
			errs <- err
		})
	}
	started.Wait()
	// Opening the FIFO waits for the run to open it.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString("go\n"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Config: %v", err)
		}
	}
	if got := configRuns(t, dir); got != 1 {
		t.Errorf("--config ran %d times for %d overlapping loads, want 1", got, loads)
	}
}
