package hook

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/queue"
)

//nolint:gochecknoglobals // a test flag must be registered at package init; it is only read
var update = flag.Bool("update", false, "rewrite golden files in testdata")

// golden compares got with the golden file, or rewrites it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o600); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

func TestParseConfigGolden(t *testing.T) {
	tests := []struct {
		name  string
		input string
		kind  Kind
	}{
		{name: "module-full", input: "module-full.yaml", kind: Module},
		{name: "global", input: "global.json", kind: Global},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "config", tt.input))
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := ParseConfig(tt.input, data, tt.kind)
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			got, err := json.MarshalIndent(cfg, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", "config", tt.name+".golden.json"), append(got, '\n'))
		})
	}
}

func TestParseConfigDefaults(t *testing.T) {
	const src = `
configVersion: v1
afterHelm: 2
kubernetes:
- kind: Pod
- kind: Pod
  name: snap
  executeHookOnEvent: []
  waitForSynchronization: false
- kind: Pod
  name: own-queue
  queue: q
  waitForSynchronization: false
  group: g
schedule:
- crontab: "0 * * * *"
  group: g
settings:
  executionMinInterval: 1s
`
	cfg, err := ParseConfig("x", []byte(src), Module)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Orders: map[Binding]float64{AfterHelm: 2},
		Kubernetes: []KubernetesBinding{
			{
				Name: "kubernetes", Kind: "Pod", Queue: "main",
				ExecuteHookOnEvent:           []WatchEvent{Added, Modified, Deleted},
				ExecuteHookOnSynchronization: true, WaitForSynchronization: true, KeepFullObjectsInMemory: true,
			},
			{
				Name: "snap", Kind: "Pod", Queue: "main",
				ExecuteHookOnEvent:           []WatchEvent{},
				ExecuteHookOnSynchronization: true, WaitForSynchronization: true, KeepFullObjectsInMemory: true,
			},
			{
				Name: "own-queue", Kind: "Pod", Queue: "q", Group: "g",
				IncludeSnapshotsFrom:         []string{"own-queue"},
				ExecuteHookOnEvent:           []WatchEvent{Added, Modified, Deleted},
				ExecuteHookOnSynchronization: true, WaitForSynchronization: false, KeepFullObjectsInMemory: true,
			},
		},
		Schedules: []ScheduleBinding{
			{Name: "schedule", Crontab: "0 * * * *", Queue: "main", Group: "g", IncludeSnapshotsFrom: []string{"own-queue"}},
		},
		Settings: Settings{ExecutionMinInterval: time.Second, ExecutionBurst: 1},
	}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("config mismatch (-want +got):\n%s", diff)
	}
	if cfg.Kubernetes[1].ExecutesOn(Added) || !cfg.Kubernetes[0].ExecutesOn(Deleted) {
		t.Errorf("ExecutesOn does not follow executeHookOnEvent")
	}
}

func TestConfigOrder(t *testing.T) {
	cfg, err := ParseConfig("x", []byte("configVersion: v1\nafterHelm: 2\nonStartup: -1.5"), Module)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		binding Binding
		order   float64
		ok      bool
	}{
		{binding: AfterHelm, order: 2, ok: true},
		{binding: OnStartup, order: -1.5, ok: true},
		{binding: BeforeHelm},
		{binding: BeforeAll},
	} {
		order, ok := cfg.Order(tt.binding)
		if order != tt.order || ok != tt.ok {
			t.Errorf("Order(%s) = %v, %v; want %v, %v", tt.binding, order, ok, tt.order, tt.ok)
		}
	}
}

func TestFieldSelector(t *testing.T) {
	s := &FieldSelector{MatchExpressions: []FieldRequirement{
		{Field: "status.phase", Operator: FieldEquals, Value: "Running"},
		{Field: "spec.nodeName", Operator: FieldNotEquals, Value: "a,b"},
	}}
	if got, want := s.Selector().String(), `status.phase=Running,spec.nodeName!=a\,b`; got != want {
		t.Errorf("Selector() = %q, want %q", got, want)
	}
}

// configErrorCase is a configuration with the problems ParseConfig must
// report, one line each, without the "hook <source>: " prefix.
type configErrorCase struct {
	name  string
	kind  Kind // Module when zero
	input string
	want  []string
}

func TestParseConfigUnknownKind(t *testing.T) {
	_, err := ParseConfig("x", []byte("configVersion: v1\nonStartup: 1"), Kind(7))
	if err == nil || err.Error() != "hook x: unknown hook kind Kind(7)" {
		t.Errorf("error %v, want the unknown kind error", err)
	}
}

func checkConfigErrors(t *testing.T, tests []configErrorCase) {
	t.Helper()
	const src = "modules/010-a/hooks/x.sh"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind := tt.kind
			if kind == 0 {
				kind = Module
			}
			cfg, err := ParseConfig(src, []byte(tt.input), kind)
			if err == nil {
				t.Fatalf("ParseConfig succeeded with %+v, want errors", cfg)
			}
			want := make([]string, len(tt.want))
			for i, w := range tt.want {
				want[i] = "hook " + src + ": " + w
			}
			if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors mismatch (-want +got):\n%s", diff)
			}
			var cfgErr *ConfigError
			if !errors.As(err, &cfgErr) || cfgErr.Source != src {
				t.Errorf("error %v is not a *ConfigError for %s", err, src)
			}
		})
	}
}

func TestParseConfigErrorsDocument(t *testing.T) {
	checkConfigErrors(t, []configErrorCase{
		{
			name:  "missing version",
			input: "onStartup: 1",
			want:  []string{`configVersion missing, read as v0: configVersion v0 is not supported: ` + convertV0},
		},
		{
			name:  "v0",
			input: "configVersion: v0\nonStartup: 1",
			want:  []string{`configVersion v0 is not supported: ` + convertV0},
		},
		{
			name:  "unknown version",
			input: "configVersion: v2\nonStartup: 1",
			want:  []string{`configVersion: unsupported version string "v2" (want "v1")`},
		},
		{
			name:  "not yaml",
			input: "configVersion: [v1",
			want:  []string{`parse yaml: yaml: line 1: did not find expected ',' or ']'`},
		},
		{
			name:  "broken json",
			input: `{"configVersion": "v1", "onStartup": 1`,
			want:  []string{`parse json: unexpected EOF`},
		},
		{
			name:  "trailing data",
			input: `{"configVersion": "v1", "onStartup": 1} {}`,
			want:  []string{`parse json: unexpected data after the configuration object`},
		},
		{
			name:  "not an object",
			input: "- configVersion",
			want:  []string{`want an object, got a list`},
		},
		{
			name:  "no bindings",
			input: "configVersion: v1",
			want:  []string{`no bindings (want at least one of onStartup, beforeHelm, afterHelm, beforeDeleteHelm, afterDeleteHelm, schedule, kubernetes, kubernetesValidating, kubernetesMutating, kubernetesCustomResourceConversion)`},
		},
		{
			name:  "unknown top-level field",
			input: "configVersion: v1\nonStartup: 1\nonStart: 2",
			want:  []string{`unknown field "onStart"`},
		},
		{
			name:  "global binding in module hook",
			input: "configVersion: v1\nbeforeAll: 1",
			want:  []string{`beforeAll: binding is only valid for global hooks, this is a module hook`},
		},
		{
			name:  "module binding in global hook",
			kind:  Global,
			input: "configVersion: v1\nonStartup: 1\nafterHelm: 1",
			want:  []string{`afterHelm: binding is only valid for module hooks, this is a global hook`},
		},
		{
			name:  "order not a number",
			input: "configVersion: v1\nonStartup: ten",
			want:  []string{`onStartup: want a number, got string "ten"`},
		},
	})
}

func TestParseConfigErrorsKubernetes(t *testing.T) {
	checkConfigErrors(t, []configErrorCase{
		{
			name:  "unknown event",
			input: "configVersion: v1\nkubernetes:\n- kind: Pod\n- kind: Pod\n  executeHookOnEvent: [Add, Modified, 3]",
			want: []string{
				`kubernetes[1].executeHookOnEvent[0]: unknown event "Add" (want Added, Modified, Deleted)`,
				`kubernetes[1].executeHookOnEvent[2]: unknown event number 3 (want Added, Modified, Deleted)`,
			},
		},
		{
			name:  "event under both names",
			input: "configVersion: v1\nkubernetes:\n- kind: Pod\n  watchEvent: [Added]\n  executeHookOnEvent: [Added]",
			want:  []string{`kubernetes[0].watchEvent: set together with executeHookOnEvent (watchEvent is its old name; keep one)`},
		},
		{
			name:  "missing kind and unknown field",
			input: "configVersion: v1\nkubernetes:\n- name: pods\n  labelSelectors: {}",
			want: []string{
				`kubernetes[0].kind: required`,
				`kubernetes[0]: unknown field "labelSelectors"`,
			},
		},
		{
			name:  "wrong types",
			input: "configVersion: v1\nkubernetes:\n- kind: Pod\n  allowFailure: \"true\"\n  queue: 5\n  includeSnapshotsFrom: [1]",
			want: []string{
				`kubernetes[0].queue: want a string, got number 5`,
				`kubernetes[0].allowFailure: want true or false, got string "true"`,
				`kubernetes[0].includeSnapshotsFrom[0]: want a string, got number 1`,
			},
		},
		{
			name:  "invalid apiVersion and jqFilter",
			input: "configVersion: v1\nkubernetes:\n- kind: Pod\n  apiVersion: a/b/c\n  jqFilter: '.metadata[' ",
			want: []string{
				`kubernetes[0].apiVersion: invalid "a/b/c": unexpected GroupVersion string: a/b/c`,
				`kubernetes[0].jqFilter: invalid jq filter ".metadata[": unexpected EOF`,
			},
		},
		{
			name: "invalid selectors",
			input: `configVersion: v1
kubernetes:
- kind: Pod
  nameSelector: {matchNames: [a]}
  labelSelector:
    matchExpressions: [{key: tier, operator: Has}]
  fieldSelector:
    matchExpressions:
    - {field: metadata.name, operator: "~=", value: a}
  namespace: {}`,
			want: []string{
				`kubernetes[0].labelSelector: "Has" is not a valid label selector operator`,
				`kubernetes[0].fieldSelector.matchExpressions[0].operator: unknown operator "~=" (want =, ==, Equals, !=, NotEquals)`,
				`kubernetes[0].namespace: empty (want nameSelector or labelSelector)`,
				`kubernetes[0].fieldSelector.matchExpressions[0]: field metadata.name cannot be combined with nameSelector.matchNames`,
			},
		},
		{
			name:  "empty label selector and unknown selector field",
			input: "configVersion: v1\nkubernetes:\n- kind: Pod\n  labelSelector: {}\n  namespace: {nameSelector: {names: [a]}}",
			want: []string{
				`kubernetes[0].labelSelector: empty selector (want matchLabels or matchExpressions)`,
				`kubernetes[0].namespace.nameSelector.matchNames: required`,
				`kubernetes[0].namespace.nameSelector: unknown field "names"`,
			},
		},
	})
}

func TestParseConfigErrorsScheduleAndSettings(t *testing.T) {
	checkConfigErrors(t, []configErrorCase{
		{
			name:  "unknown snapshot binding",
			input: "configVersion: v1\nkubernetes:\n- {kind: Pod, name: pods, includeSnapshotsFrom: [pods, cms]}\nschedule:\n- {crontab: '* * * * *', includeSnapshotsFrom: [podz]}",
			want: []string{
				`kubernetes[0].includeSnapshotsFrom[1]: unknown kubernetes binding "cms" (want one of "pods")`,
				`schedule[0].includeSnapshotsFrom[0]: unknown kubernetes binding "podz" (want one of "pods")`,
			},
		},
		{
			name:  "snapshots without kubernetes bindings",
			input: "configVersion: v1\nschedule:\n- {crontab: '* * * * *', includeSnapshotsFrom: [pods]}",
			want:  []string{`schedule[0].includeSnapshotsFrom[0]: unknown kubernetes binding "pods" (the hook has no kubernetes bindings)`},
		},
		{
			name:  "invalid crontabs",
			input: "configVersion: v1\nschedule:\n- crontab: '* * *'\n- crontab: '* * * * * * *'\n- name: x\n- crontab: '61 * * * *'",
			want: []string{
				`schedule[0].crontab: invalid crontab "* * *": expected 5 to 6 fields, found 3: [* * *]`,
				`schedule[1].crontab: invalid crontab "* * * * * * *": expected 5 to 6 fields, found 7: [* * * * * * *]`,
				`schedule[2].crontab: required`,
				`schedule[3].crontab: invalid crontab "61 * * * *": end of range (61) above maximum (59): 61`,
			},
		},
		{
			name:  "invalid settings",
			input: "configVersion: v1\nonStartup: 1\nsettings: {executionMinInterval: 3 seconds, executionBurst: 1.5, burst: 1}",
			want: []string{
				`settings.executionMinInterval: invalid duration "3 seconds" (want e.g. 3s)`,
				`settings.executionBurst: want an integer, got number 1.5`,
				`settings: unknown field "burst"`,
			},
		}})
}

func TestParseConfigFormats(t *testing.T) {
	want, err := ParseConfig("y", []byte("configVersion: v1\nkubernetes:\n- kind: Pod\n  jqFilter: .spec"), Global)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		input string
	}{
		{name: "json", input: `{"configVersion":"v1","kubernetes":[{"kind":"Pod","jqFilter":".spec"}]}`},
		{name: "json with tabs", input: "{\n\t\"configVersion\": \"v1\",\n\t\"kubernetes\": [{\"kind\": \"Pod\", \"jqFilter\": \".spec\"}]\n}\n"},
		{name: "yaml flow mapping", input: `{configVersion: v1, kubernetes: [{kind: Pod, jqFilter: .spec}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseConfig(tt.name, []byte(tt.input), Global)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("config differs from the YAML one (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseConfigV0IsTerminal(t *testing.T) {
	tests := []struct {
		name, input string
		want        bool
	}{
		{name: "v0", input: "configVersion: v0\nonStartup: 1", want: true},
		{name: "v0 in json", input: `{"configVersion": "v0", "onKubernetesEvent": [{"kind": "Pod", "event": ["add"]}]}`, want: true},
		{name: "no version", input: `{"onStartup": 10, "schedule": [{"crontab": "* * * * *"}]}`, want: true},
		{name: "unknown version", input: "configVersion: v2\nonStartup: 1"},
		{name: "broken v1", input: "configVersion: v1\nschedule:\n- crontab: never"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("hooks/x", []byte(tt.input), Module)
			if err == nil {
				t.Fatal("ParseConfig succeeded, want an error")
			}
			got := queue.IsTerminal(err)
			if got != tt.want || errors.Is(err, ErrConfigV0) != tt.want {
				t.Errorf("error %q: terminal %t, errors.Is(ErrConfigV0) %t; want both %t", err, got, errors.Is(err, ErrConfigV0), tt.want)
			}
		})
	}
}
