package hook

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/hook/batch"
)

// buildBatchHook builds testdata/batchhook into dir.
func buildBatchHook(t *testing.T, dir string) string {
	t.Helper()
	out := filepath.Join(dir, "batch")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", out, "./testdata/batchhook")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build batch hook: %v\n%s", err, b)
	}
	return out
}

func TestIsNative(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, path string
		want       bool
	}{
		{"script", writeScript(t, dir, "script", "exit 0\n"), false},
		{"binary", buildBatchHook(t, dir), true},
		{"empty file", empty, false},
	} {
		got, err := batch.IsNative(tt.path)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got != tt.want {
			t.Errorf("%s: IsNative = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// batchSummary is what the tests compare of a parsed batch hook.
type batchSummary struct {
	ID, Name string
	Args     []string
	Orders   map[Binding]float64
	// Kube is "name group keepFull onEvent" of each kubernetes binding.
	Kube      []string
	Schedules []string
	Settings  Settings
}

func summarize(hooks []BatchHook) []batchSummary {
	out := make([]batchSummary, 0, len(hooks))
	for _, h := range hooks {
		s := batchSummary{ID: h.ID, Name: h.Name, Args: h.Args, Orders: h.Config.Orders, Settings: h.Config.Settings}
		for i := range h.Config.Kubernetes {
			k := &h.Config.Kubernetes[i]
			s.Kube = append(s.Kube, strings.Join([]string{
				k.Name, k.Group, map[bool]string{true: "full", false: "filtered"}[k.KeepFullObjectsInMemory],
				map[bool]string{true: "events", false: "no-events"}[len(k.ExecuteHookOnEvent) > 0],
			}, " "))
		}
		for _, sc := range h.Config.Schedules {
			s.Schedules = append(s.Schedules, strings.Join([]string{
				sc.Name, sc.Group, map[bool]string{true: "allowFailure", false: "strict"}[sc.AllowFailure],
			}, " "))
		}
		out = append(out, s)
	}
	return out
}

func TestBatchHookProtocol(t *testing.T) {
	t.Parallel()
	bin := buildBatchHook(t, t.TempDir())
	first := batchSummary{
		ID: "0", Name: "first", Args: []string{"hook", "run", "0"}, Orders: map[Binding]float64{BeforeHelm: 5},
		Kube: []string{"pods main filtered no-events"},
	}
	second := batchSummary{
		ID: "1", Name: "second", Args: []string{"hook", "run", "1"},
		Schedules: []string{"tick main allowFailure"},
		Settings:  Settings{ExecutionMinInterval: 3 * time.Second, ExecutionBurst: 2},
	}
	readiness := batchSummary{ID: ReadinessID, Name: "readiness", Args: []string{"hook", "ready"}, Schedules: []string{"probe main allowFailure"}}
	for _, tt := range []struct {
		form string
		want []batchSummary
	}{
		{"object", []batchSummary{first, second, readiness}},
		{"array", []batchSummary{first, second}},
	} {
		t.Run(tt.form, func(t *testing.T) {
			t.Parallel()
			e := &Executor{Env: []string{"BATCH_FORM=" + tt.form}, TempDir: t.TempDir()}
			out, err := e.BatchConfig(t.Context(), bin)
			if err != nil {
				t.Fatal(err)
			}
			if out == nil {
				t.Fatal("BatchConfig = nil, want the batch config")
			}
			hooks, err := ParseBatchConfig(bin, out, Module)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, summarize(hooks)); diff != "" {
				t.Fatalf("hooks (-want +got):\n%s", diff)
			}
			for _, h := range hooks {
				res, err := e.Run(t.Context(), Run{Path: bin, Args: h.Args, Kind: RunHook})
				if err != nil {
					t.Fatalf("run %s: %v", h.ID, err)
				}
				if len(res.ValuesPatch) != 1 || res.ValuesPatch[0].Value != h.Args[len(h.Args)-1] {
					t.Errorf("run %v: values patch %+v, want the hook's own", h.Args, res.ValuesPatch)
				}
			}
		})
	}
}

func TestBatchConfigPlainHooks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	script := writeScript(t, dir, "script", `echo "$*" >>"`+calls+`"; echo '{"configVersion":"v1","afterHelm":1}'`+"\n")
	bin := buildBatchHook(t, dir)
	for _, tt := range []struct {
		name, path string
		env        []string
	}{
		{"a script is never asked hook list", script, nil},
		{"a native hook that refuses hook list", bin, []string{"BATCH_PLAIN=1"}},
	} {
		e := &Executor{Env: tt.env}
		out, err := e.BatchConfig(t.Context(), tt.path)
		if err != nil || out != nil {
			t.Errorf("%s: BatchConfig = %q, %v; want nil, nil", tt.name, out, err)
		}
		cfg, err := e.Config(t.Context(), tt.path)
		if err != nil {
			t.Fatalf("%s: --config: %v", tt.name, err)
		}
		if _, err := ParseConfig(tt.path, cfg, Module); err != nil {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
	got, err := os.ReadFile(calls)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("--config\n", string(got)); diff != "" {
		t.Errorf("script arguments (-want +got):\n%s", diff)
	}
}

func TestParseBatchConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, data, want string
	}{
		{"unknown version", `{"version":"v2","hooks":[{}]}`, `hook b: version: unsupported batch config version "v2", want v1`},
		{"no hooks", `{"version":"v1","hooks":[]}`, "hook b: batch binary lists no hooks"},
		{"not JSON", `Found 1 items`, "hook b: decode hook config:"},
		{"a bad binding names the hook's id", `[{"configVersion":"v1"},{"configVersion":"v1","beforeAll":1}]`, "hook b#1: beforeAll:"},
		{"a null hook", `[null]`, "hook b#0: hook config is null"},
	} {
		_, err := ParseBatchConfig("b", []byte(tt.data), Module)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}
