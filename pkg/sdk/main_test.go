package sdk

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// files creates the protocol files in a temp dir with the given inputs and
// returns a Getenv for them.
func files(t *testing.T, inputs map[string]string) func(string) string {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{}
	for _, name := range []string{
		"BINDING_CONTEXT_PATH", "VALUES_PATH", "CONFIG_VALUES_PATH", "VALUES_JSON_PATCH_PATH",
		"CONFIG_VALUES_JSON_PATCH_PATH", "KUBERNETES_PATCH_PATH", "METRICS_PATH",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(inputs[name]), 0o600); err != nil {
			t.Fatal(err)
		}
		env[name] = path
	}
	return func(k string) string { return env[k] }
}

func read(t *testing.T, getenv func(string) string, name string) string {
	t.Helper()
	data, err := os.ReadFile(getenv(name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func serve(t *testing.T, getenv func(string) string, args []string, hooks ...Hook) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Serve(t.Context(), Env{Args: args, Getenv: getenv, Stdout: &out, Stderr: &errOut}, hooks...)
	return code, out.String(), errOut.String()
}

func noop(context.Context, *Input) error { return nil }

func TestServeProtocol(t *testing.T) {
	t.Parallel()
	a := Hook{Name: "a", Config: Config{BeforeHelm: Order(1)}, Run: noop}
	b := Hook{Name: "b", Config: Config{Schedule: []ScheduleBinding{{Name: "s", Crontab: "* * * * *"}}}, Run: noop}
	r := Hook{Name: "r", Readiness: true, Config: Config{Schedule: []ScheduleBinding{{Name: "p", Crontab: "*/5 * * * * *"}}}, Run: noop}
	none := func(string) string { return "" }
	for _, tt := range []struct {
		name       string
		args       []string
		hooks      []Hook
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"--config of the only hook", []string{"--config"}, []Hook{a}, 0, `{"configVersion":"v1","beforeHelm":1}` + "\n", ""},
		{"--config with several hooks", []string{"--config"}, []Hook{a, b}, 2, "", "several hooks"},
		{"hook list", []string{"hook", "list"}, []Hook{a, b, r}, 0, "Found 2 items:\n0 - a\n1 - b\n", ""},
		{"hook config", []string{"hook", "config"}, []Hook{a, r}, 0,
			`{"version":"v1","hooks":[{"configVersion":"v1","metadata":{"name":"a"},"beforeHelm":1}],` +
				`"readiness":{"configVersion":"v1","metadata":{"name":"r"},"schedule":[{"name":"p","crontab":"*/5 * * * * *"}]}}` + "\n", ""},
		{"hook run out of range", []string{"hook", "run", "2"}, []Hook{a, b}, 2, "", `no hook "2", want 0..1`},
		{"hook ready without one", []string{"hook", "ready"}, []Hook{a}, 2, "", "no readiness hook"},
		{"unknown arguments", []string{"hook", "dance"}, []Hook{a}, 2, "", "unknown arguments"},
		{"two readiness hooks", []string{"hook", "list"}, []Hook{r, r}, 1, "", "both readiness hooks"},
	} {
		code, stdout, stderr := serve(t, none, tt.args, tt.hooks...)
		if code != tt.wantCode || stdout != tt.wantStdout || !strings.Contains(stderr, tt.wantStderr) {
			t.Errorf("%s: got %d %q %q, want %d %q and stderr with %q", tt.name, code, stdout, stderr, tt.wantCode, tt.wantStdout, tt.wantStderr)
		}
	}
}

func TestServeRunWritesOutputs(t *testing.T) {
	t.Parallel()
	var seen *Input
	h := Hook{Name: "w", Run: func(_ context.Context, in *Input) error {
		seen = in
		var replicas int
		if _, err := in.Values.Decode(&replicas, "m", "replicas"); err != nil {
			return err
		}
		in.ValuesPatch.Set(Pointer("m", "internal", "a/b"), replicas+1)
		in.ConfigValuesPatch.Remove("/m/old")
		in.Objects.CreateOrUpdate(map[string]any{"apiVersion": "v1", "kind": "ConfigMap"})
		in.Objects.DeleteInBackground(ObjectRef{APIVersion: "v1", Kind: "Secret", Namespace: "n", Name: "s", IgnoreMissing: true})
		in.Metrics.Set("m_gauge", 2, map[string]string{"k": "v"})
		in.Metrics.Expire("g")
		return nil
	}}
	getenv := files(t, map[string]string{
		"BINDING_CONTEXT_PATH": `[{"binding":"pods","type":"Synchronization","objects":[{"filterResult":"a"}]},` +
			`{"binding":"beforeHelm","snapshots":{"pods":[{"filterResult":"b"}]}}]`,
		"VALUES_PATH": `{"m":{"replicas":2}}`,
	})
	// A hook appends: what an earlier writer left stays.
	if err := os.WriteFile(getenv("METRICS_PATH"), []byte("{\"name\":\"earlier\",\"action\":\"set\",\"value\":1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := serve(t, getenv, nil, h); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := map[string]string{
		"VALUES_JSON_PATCH_PATH":        `{"op":"add","path":"/m/internal/a~1b","value":3}` + "\n",
		"CONFIG_VALUES_JSON_PATCH_PATH": `{"op":"remove","path":"/m/old"}` + "\n",
		"KUBERNETES_PATCH_PATH": `{"operation":"CreateOrUpdate","object":{"apiVersion":"v1","kind":"ConfigMap"}}` + "\n" +
			`{"operation":"DeleteInBackground","apiVersion":"v1","kind":"Secret","namespace":"n","name":"s","ignoreMissingObject":true}` + "\n",
		"METRICS_PATH": `{"name":"earlier","action":"set","value":1}` + "\n" +
			`{"name":"m_gauge","action":"set","value":2,"labels":{"k":"v"}}` + "\n" + `{"name":"","action":"expire","group":"g"}` + "\n",
	}
	got := map[string]string{}
	for name := range want {
		got[name] = read(t, getenv, name)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	snap := make([]string, 0, 1)
	for _, o := range seen.Snapshot("pods") {
		var s string
		if err := o.DecodeFilterResult(&s); err != nil {
			t.Fatal(err)
		}
		snap = append(snap, s)
	}
	if diff := cmp.Diff([]string{"b"}, snap); diff != "" {
		t.Errorf("snapshot: the last context's (-want +got):\n%s", diff)
	}
}

func TestServeFailedRunWritesNothing(t *testing.T) {
	t.Parallel()
	h := Hook{Name: "f", Run: func(_ context.Context, in *Input) error {
		in.ValuesPatch.Set("/m/x", 1)
		return errors.New("boom")
	}}
	getenv := files(t, nil)
	code, _, stderr := serve(t, getenv, []string{"hook", "run", "0"}, h)
	if code != 1 || !strings.Contains(stderr, "hook f: boom") {
		t.Errorf("exit %d, stderr %q; want 1 and the error", code, stderr)
	}
	if got := read(t, getenv, "VALUES_JSON_PATCH_PATH"); got != "" {
		t.Errorf("values patch %q, want none", got)
	}
}

func TestKubernetesBindingJSON(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		b    KubernetesBinding
		want string
	}{
		{"nil events: every event", KubernetesBinding{Name: "a", APIVersion: "v1", Kind: "Pod"}, `{"name":"a","apiVersion":"v1","kind":"Pod"}`},
		{"empty events: none", KubernetesBinding{Name: "a", APIVersion: "v1", Kind: "Pod", ExecuteHookOnEvent: []string{}},
			`{"name":"a","apiVersion":"v1","kind":"Pod","executeHookOnEvent":[]}`},
	} {
		got, err := json.Marshal(tt.b)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}
