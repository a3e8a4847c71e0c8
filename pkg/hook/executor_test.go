package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/values"
)

// writeScript writes an executable /bin/sh script into dir.
func writeScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	//nolint:gosec // G306: a hook script must be executable
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// logBuffer collects JSON log records written concurrently by the stdout
// and stderr copiers of os/exec.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// records returns the logged records as maps, without the time key.
func (b *logBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(b.buf.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		delete(rec, "time")
		out = append(out, rec)
	}
	return out
}

// testExecutor returns an executor with short timeouts, a private temp base,
// TEST_OUT pointing to a directory for scripts to leave evidence in, and a
// log buffer.
func testExecutor(t *testing.T) (*Executor, string, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	out := t.TempDir()
	e := &Executor{
		Logger:    slog.New(slog.NewJSONHandler(logs, nil)),
		Timeout:   2 * time.Second,
		WaitDelay: 200 * time.Millisecond,
		TempDir:   t.TempDir(),
		Env:       []string{"TEST_OUT=" + out},
	}
	return e, out, logs
}

// assertNoRunDirs checks that every per-run directory was removed.
func assertNoRunDirs(t *testing.T, e *Executor) {
	t.Helper()
	entries, err := os.ReadDir(e.TempDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, entry := range entries {
		t.Errorf("run dir left behind: %s", entry.Name())
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

const protocolScript = `set -eu
cp "$BINDING_CONTEXT_PATH" "$TEST_OUT/context.json"
cp "$VALUES_PATH" "$TEST_OUT/values.json"
cp "$CONFIG_VALUES_PATH" "$TEST_OUT/config-values.json"
pwd > "$TEST_OUT/pwd"
dirname "$VALUES_PATH" > "$TEST_OUT/rundir"
stat -c %a "$(dirname "$VALUES_PATH")" "$VALUES_PATH" "$METRICS_PATH" > "$TEST_OUT/modes"
echo "${MODULE_ENABLED_RESULT:-unset}" > "$TEST_OUT/enabled-env"
echo '[{"op":"add","path":"/a/x","value":1}]' > "$VALUES_JSON_PATCH_PATH"
echo '{"op":"remove","path":"/a/y"}' >> "$VALUES_JSON_PATCH_PATH"
echo '{"op":"add","path":"/a/z","value":"s"}' > "$CONFIG_VALUES_JSON_PATCH_PATH"
echo '{"operation":"Delete","kind":"Pod","name":"p"}' > "$KUBERNETES_PATCH_PATH"
echo '{"name":"m","action":"set","value":1}' > "$METRICS_PATH"
echo "hello from stdout"
printf 'no newline at end' >&2
`

func TestRunProtocol(t *testing.T) {
	e, out, logs := testExecutor(t)
	hookDir := t.TempDir()
	path := writeScript(t, hookDir, "hook.sh", protocolScript)
	run := Run{
		Path:         path,
		Contexts:     []BindingContext{{Binding: "pods", Type: TypeSynchronization}},
		Values:       values.Values{"global": map[string]any{"a": 1.0}, "a": map[string]any{"y": true}},
		ConfigValues: nil,
		Module:       "a",
		Hook:         "a/hooks/hook.sh",
		Binding:      "pods",
	}
	res, err := e.Run(t.Context(), run)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	// A hook runs in the operator's working directory, not its own.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}

	want := &Result{
		ValuesPatch: values.Patch{
			{Op: "add", Path: "/a/x", Value: 1.0},
			{Op: "remove", Path: "/a/y"},
		},
		ConfigValuesPatch: values.Patch{{Op: "add", Path: "/a/z", Value: "s"}},
		KubernetesPatch:   []byte(`{"operation":"Delete","kind":"Pod","name":"p"}`),
		Metrics:           []byte(`{"name":"m","action":"set","value":1}`),
	}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result mismatch (-want +got):\n%s", diff)
	}
	inputs := map[string]string{
		"context.json":       `[{"binding":"pods","type":"Synchronization","objects":[]}]`,
		"values.json":        `{"a":{"y":true},"global":{"a":1}}`,
		"config-values.json": `{}`,
		"pwd":                wd + "\n",
		"modes":              "700\n600\n600\n",
		"enabled-env":        "unset\n",
	}
	for name, want := range inputs {
		if got := readFile(t, filepath.Join(out, name)); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	runDir := strings.TrimSpace(readFile(t, filepath.Join(out, "rundir")))
	if filepath.Dir(runDir) != e.TempDir {
		t.Errorf("run dir %s is not under the temp base %s", runDir, e.TempDir)
	}
	assertNoRunDirs(t, e)

	attrs := map[string]any{"level": "INFO", "msg": "hook output", "module": "a", "hook": "a/hooks/hook.sh", "binding": "pods"}
	wantLogs := []map[string]any{
		withAttrs(attrs, map[string]any{"stream": "stdout", "line": "hello from stdout"}),
		withAttrs(attrs, map[string]any{"stream": "stderr", "line": "no newline at end"}),
	}
	if diff := cmp.Diff(wantLogs, logs.records(t)); diff != "" {
		t.Errorf("logs mismatch (-want +got):\n%s", diff)
	}
}

// withAttrs returns base with extra added.
func withAttrs(base, extra map[string]any) map[string]any {
	m := maps.Clone(base)
	maps.Copy(m, extra)
	return m
}

func TestRunFailures(t *testing.T) {
	var many strings.Builder
	for i := 1; i <= 30; i++ {
		many.WriteString("echo line" + strconv.Itoa(i) + " >&2\n")
	}
	tests := []struct {
		name      string
		script    string
		maxOutput int64
		wantExit  *ExitError
		wantErr   string
	}{
		{
			name:     "exit code and stderr tail",
			script:   many.String() + "exit 3\n",
			wantExit: &ExitError{Code: 3, Stderr: tailOf(11, 30)},
		},
		{
			name:     "exit without stderr",
			script:   "exit 1\n",
			wantExit: &ExitError{Code: 1},
		},
		{
			name:     "killed by signal",
			script:   "echo dying >&2\nkill -9 $$\n",
			wantExit: &ExitError{Code: -1, Signal: 9, Stderr: "dying"},
		},
		{
			name:     "long stderr is cut to 4 KiB",
			script:   "head -c 10000 /dev/zero | tr '\\0' x >&2\necho >&2\necho last >&2\nexit 2\n",
			wantExit: &ExitError{Code: 2, Stderr: strings.Repeat("x", 4096-len("\nlast")) + "\nlast"},
		},
		{
			name:    "invalid values patch",
			script:  `echo '{"op":"add"}' > "$VALUES_JSON_PATCH_PATH"` + "\n",
			wantErr: `VALUES_JSON_PATCH_PATH: patch op 0: `,
		},
		{
			name:    "invalid config values patch",
			script:  `echo '"x"' > "$CONFIG_VALUES_JSON_PATCH_PATH"` + "\n",
			wantErr: `CONFIG_VALUES_JSON_PATCH_PATH: patch item 0 is `,
		},
		{
			name:      "output over the size limit",
			script:    `head -c 100 /dev/zero > "$METRICS_PATH"` + "\n",
			maxOutput: 64,
			wantErr:   "METRICS_PATH: larger than 64 bytes",
		},
		{
			name:    "output replaced by a fifo",
			script:  `rm "$KUBERNETES_PATCH_PATH" && mkfifo "$KUBERNETES_PATCH_PATH"` + "\n",
			wantErr: "KUBERNETES_PATCH_PATH: not a regular file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _, _ := testExecutor(t)
			e.MaxOutputSize = tt.maxOutput
			path := writeScript(t, t.TempDir(), "hook.sh", tt.script)
			res, err := e.Run(t.Context(), Run{Path: path})
			if err == nil {
				t.Fatalf("Run succeeded with %+v, want an error", res)
			}
			assertNoRunDirs(t, e)
			checkRunError(t, err, tt.wantExit, tt.wantErr)
		})
	}
}

// checkRunError compares err with wantExit when set, else checks that its
// text starts with wantPrefix.
func checkRunError(t *testing.T, err error, wantExit *ExitError, wantPrefix string) {
	t.Helper()
	if wantExit == nil {
		if !strings.HasPrefix(err.Error(), wantPrefix) {
			t.Errorf("error %q, want prefix %q", err, wantPrefix)
		}
		return
	}
	var exitErr *ExitError
	if !errors.As(err, &exitErr) {
		t.Fatalf("error %v is not an *ExitError", err)
	}
	if diff := cmp.Diff(wantExit, exitErr); diff != "" {
		t.Errorf("exit error mismatch (-want +got):\n%s", diff)
	}
}

// tailOf renders stderr lines "lineN" for N in [from, to].
func tailOf(from, to int) string {
	lines := make([]string, 0, to-from+1)
	for i := from; i <= to; i++ {
		lines = append(lines, "line"+strconv.Itoa(i))
	}
	return strings.Join(lines, "\n")
}

func TestRunEnabledScript(t *testing.T) {
	tests := []struct {
		name       string
		script     string
		want       *Result
		wantErr    string
		wantOutEnv string
	}{
		{
			name:   "true",
			script: `echo true > "$MODULE_ENABLED_RESULT"`,
			want:   &Result{Enabled: new(true)},
		},
		{
			name:   "false with whitespace and reason",
			script: `printf '  false\n\n' > "$MODULE_ENABLED_RESULT"; echo "no CRDs" > "$MODULE_ENABLED_REASON"`,
			want:   &Result{Enabled: new(false), EnabledReason: "no CRDs"},
		},
		{
			name:    "anything else",
			script:  `echo yes > "$MODULE_ENABLED_RESULT"`,
			wantErr: `MODULE_ENABLED_RESULT: want true or false, got "yes"`,
		},
		{
			name:    "nothing written",
			script:  `true`,
			wantErr: `MODULE_ENABLED_RESULT: want true or false, got nothing`,
		},
		{
			name:    "hook protocol files are not offered",
			script:  `test -z "${BINDING_CONTEXT_PATH:-}${VALUES_JSON_PATCH_PATH:-}" && test -s "$VALUES_PATH" && echo false > "$MODULE_ENABLED_RESULT"`,
			want:    &Result{Enabled: new(false)},
			wantErr: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _, _ := testExecutor(t)
			path := writeScript(t, t.TempDir(), "enabled", tt.script+"\n")
			res, err := e.Run(t.Context(), Run{Path: path, Kind: RunEnabledScript, Values: values.Values{"global": map[string]any{}}})
			assertNoRunDirs(t, e)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if diff := cmp.Diff(tt.want, res); diff != "" {
				t.Errorf("result mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestConfig(t *testing.T) {
	script := `if [ "$1" = --config ]; then printf 'configVersion: v1\nonStartup: 5\n'; echo "config log" >&2; exit 0; fi
exit 9
`
	e, _, logs := testExecutor(t)
	path := writeScript(t, t.TempDir(), "hook.sh", script)
	data, err := e.Config(t.Context(), path)
	if err != nil {
		t.Fatalf("Config: %v", err)
	}
	if got, want := string(data), "configVersion: v1\nonStartup: 5\n"; got != want {
		t.Errorf("config output %q, want %q", got, want)
	}
	wantLogs := []map[string]any{{"level": "INFO", "msg": "hook output", "hook": path, "stream": "stderr", "line": "config log"}}
	if diff := cmp.Diff(wantLogs, logs.records(t)); diff != "" {
		t.Errorf("logs mismatch (-want +got):\n%s", diff)
	}

	e.MaxOutputSize = 10
	if _, err := e.Config(t.Context(), path); err == nil || err.Error() != "config output larger than 10 bytes" {
		t.Errorf("Config with a small limit: error %v, want the size error", err)
	}
}

func TestRunLogLimit(t *testing.T) {
	// Each line "lineNN" is 6 bytes, all on stderr, so their order is
	// known and the failed run's stderr tail can be checked too.
	var script strings.Builder
	var all []string
	for i := 10; i < 20; i++ {
		script.WriteString("echo line" + strconv.Itoa(i) + " >&2\n")
		all = append(all, "line"+strconv.Itoa(i))
	}
	script.WriteString("exit 1\n")
	tests := []struct {
		name        string
		limit       int64
		wantLines   []string
		wantDropped float64
	}{
		{name: "within the limit", limit: 1 << 10, wantLines: all},
		{name: "cut after three lines", limit: 20, wantLines: all[:3], wantDropped: 7 * 6},
		{name: "no bound", limit: 0, wantLines: all},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _, logs := testExecutor(t)
			e.MaxLogBytes = tt.limit
			path := writeScript(t, t.TempDir(), "hook.sh", script.String())
			_, err := e.Run(t.Context(), Run{Path: path, Kind: RunHook})
			var exit *ExitError
			if !errors.As(err, &exit) || exit.Stderr != strings.Join(all, "\n") {
				t.Fatalf("err = %v, want an exit error with the whole stderr tail, whatever the log limit", err)
			}
			var lines []string
			var dropped float64
			for _, rec := range logs.records(t) {
				switch rec["msg"] {
				case "hook output":
					lines = append(lines, rec["line"].(string))
				case "hook output not logged beyond the limit":
					dropped = rec["count"].(float64)
				}
			}
			if diff := cmp.Diff(tt.wantLines, lines); diff != "" {
				t.Errorf("logged lines (-want +got):\n%s", diff)
			}
			if dropped != tt.wantDropped {
				t.Errorf("dropped bytes = %v, want %v", dropped, tt.wantDropped)
			}
		})
	}
}

// TestConfigOutputLargerThanACopyBuffer: output many times the pooled
// copy buffer arrives whole and in order, run after run.
func TestConfigOutputLargerThanACopyBuffer(t *testing.T) {
	const copyBufSize = 8 << 10 // the buffer package process reads output with
	e, _, _ := testExecutor(t)
	var want strings.Builder
	for i := range 4000 {
		fmt.Fprintf(&want, "# line %d of the config\n", i)
	}
	if want.Len() < 8*copyBufSize {
		t.Fatalf("the test output (%d bytes) should span several copy buffers (%d)", want.Len(), copyBufSize)
	}
	for run := range 3 {
		// Another path each time: an unchanged file is not run again.
		path := writeScript(t, t.TempDir(), "hook.sh", `i=0; while [ $i -lt 4000 ]; do echo "# line $i of the config"; i=$((i+1)); done`)
		data, err := e.Config(t.Context(), path)
		if err != nil {
			t.Fatalf("run %d: Config: %v", run, err)
		}
		if string(data) != want.String() {
			t.Fatalf("run %d: %d bytes back, want the %d written, in order", run, len(data), want.Len())
		}
	}
}

// A webhook run's response file has two names; the hook may write either,
// and the run's directory is created anew for each run.
func TestRunWebhookResponse(t *testing.T) {
	e, _, _ := testExecutor(t)
	path := writeScript(t, t.TempDir(), "hook.sh", `[ "$VALIDATING_RESPONSE_PATH" = "$ADMISSION_RESPONSE_PATH" ] || exit 3
[ -f "$CONVERSION_RESPONSE_PATH" ] || exit 4
echo '{"allowed": false, "message": "no"}' > "$VALIDATING_RESPONSE_PATH"
`)
	res, err := e.Run(t.Context(), Run{Path: path, Kind: RunWebhook, Contexts: []BindingContext{{Binding: "v", Type: TypeValidating}}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got, want := string(res.AdmissionResponse), `{"allowed": false, "message": "no"}`; got != want {
		t.Errorf("admission response %q, want %q", got, want)
	}
	if len(res.ConversionResponse) != 0 || len(res.ValuesPatch) != 0 || len(res.Metrics) != 0 {
		t.Errorf("outputs the hook did not write: %+v", res)
	}
	assertNoRunDirs(t, e)
}

// TestRunDirRemovedWhateverTheHookLeft: the run's directory goes away when
// the hook added files and directories to it, removed files of its own, or
// put a directory in a file's place.
func TestRunDirRemovedWhateverTheHookLeft(t *testing.T) {
	for name, script := range map[string]string{
		"extra files":                 `d=$(dirname "$VALUES_PATH"); echo x > "$d/extra"; mkdir -p "$d/sub/deeper"; echo y > "$d/sub/deeper/file"`,
		"files removed":               `rm -f "$VALUES_PATH" "$METRICS_PATH" "$BINDING_CONTEXT_PATH"`,
		"directory in a file's place": `rm -f "$VALUES_PATH"; mkdir "$VALUES_PATH"; echo z > "$VALUES_PATH/inside"`,
	} {
		t.Run(name, func(t *testing.T) {
			e, _, _ := testExecutor(t)
			path := writeScript(t, t.TempDir(), "hook.sh", script+"\n")
			if _, err := e.Run(t.Context(), Run{Path: path, Kind: RunHook, Contexts: []BindingContext{{Binding: "b", Type: TypeSchedule}}}); err != nil {
				t.Fatalf("Run: %v", err)
			}
			assertNoRunDirs(t, e)
		})
	}
}
