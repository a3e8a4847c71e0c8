package catalogue

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// jsonStream decodes a stream of JSON values, as hooks write patches.
func jsonStream(t *testing.T, s string) []any {
	t.Helper()
	var out []any
	dec := json.NewDecoder(strings.NewReader(s))
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("decode %q: %v", s, err)
		}
		out = append(out, v)
	}
}

func TestDiscoveryHookOffline(t *testing.T) {
	t.Parallel()
	nodes := func(names ...string) string {
		items := make([]string, 0, len(names))
		for _, n := range names {
			items = append(items, `{"filterResult":"`+n+`"}`)
		}
		return `{"nodes":[` + strings.Join(items, ",") + `]}`
	}
	count := func(n float64) any {
		return map[string]any{"op": "add", "path": "/global/discovery/nodeCount", "value": n}
	}
	version := map[string]any{"op": "add", "path": "/global/discovery/kubernetesVersion", "value": "v1.36.3"}
	for _, tt := range []struct {
		name, contexts, version string
		want                    []any
	}{
		{"onStartup: version only", `[{"binding":"onStartup"}]`, "v1.36.3", []any{version}},
		{"onStartup without a version", `[{"binding":"onStartup"}]`, "", nil},
		{"onStartup: an empty snapshot is not a count", `[{"binding":"onStartup","snapshots":` + nodes() + `}]`, "", nil},
		{"a malformed version is ignored", `[{"binding":"onStartup"}]`, `1.2"}`, nil},
		{"Synchronization", `[{"binding":"nodes","type":"Synchronization","objects":[{"filterResult":"a"},{"filterResult":"b"}],"snapshots":` + nodes("a", "b") + `}]`,
			"v1.36.3", []any{count(2), version}},
		{"no nodes", `[{"binding":"nodes","type":"Synchronization","objects":[],"snapshots":` + nodes() + `}]`, "", []any{count(0)}},
		{"combined events: the last snapshot", `[{"binding":"nodes","type":"Event","watchEvent":"Added","filterResult":"c","snapshots":` + nodes("a", "b", "c") +
			`},{"binding":"nodes","type":"Event","watchEvent":"Deleted","filterResult":"a","snapshots":` + nodes("b", "c") + `}]`, "", []any{count(2)}},
		{"beforeAll", `[{"binding":"beforeAll","snapshots":` + nodes("x") + `}]`, "", []any{count(1)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var env []string
			if tt.version != "" {
				env = append(env, "KUBERNETES_VERSION="+tt.version)
			}
			out := runScript(t, "global-hooks/hooks/discovery", tt.contexts, `{"global":{"clusterName":"c","discovery":{"nodeCount":0}}}`, env...)
			if diff := cmp.Diff(tt.want, jsonStream(t, out["VALUES_JSON_PATCH_PATH"])); diff != "" {
				t.Errorf("values patch (-want +got):\n%s", diff)
			}
			// The metric follows the count.
			var metrics []any
			for _, p := range tt.want {
				if p := p.(map[string]any); p["path"] == "/global/discovery/nodeCount" {
					metrics = append(metrics, map[string]any{"name": "addon_operator_discovered_nodes", "action": "set", "value": p["value"]})
				}
			}
			if diff := cmp.Diff(metrics, jsonStream(t, out["METRICS_PATH"])); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNamespaceDefaultsHookOffline(t *testing.T) {
	t.Parallel()
	snap := func(names ...string) string {
		items := make([]string, 0, len(names))
		for _, n := range names {
			items = append(items, `{"filterResult":"`+n+`"}`)
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	contexts := `[{"binding":"quotas","type":"Group","groupName":"defaults","snapshots":{"namespaces":` + snap("a", "b") +
		`,"quotas":` + snap("b", "c") + `,"limitranges":` + snap("c", "d") + `}}]`
	values := `{"global":{"clusterName":"x"},"namespaceDefaults":{"quota":{"requestsCPU":"2","requestsMemory":"4Gi","limitsCPU":"3","limitsMemory":"6Gi","pods":7},` +
		`"limitRange":{"defaultRequestCPU":"50m","defaultRequestMemory":"64Mi","defaultLimitCPU":"250m","defaultLimitMemory":"256Mi"}}}`
	out := runScript(t, "modules/010-namespace-defaults/hooks/namespace-defaults", contexts, values)

	meta := func(ns string) map[string]any {
		return map[string]any{"name": "namespace-defaults", "namespace": ns,
			"labels": map[string]any{"addon-operator.io/managed-by": "addon-operator", "addon-operator.io/module": "namespace-defaults"}}
	}
	apply := func(ns string) []any {
		quota := map[string]any{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": meta(ns), "spec": map[string]any{"hard": map[string]any{
			"requests.cpu": "2", "requests.memory": "4Gi", "limits.cpu": "3", "limits.memory": "6Gi", "pods": "7"}}}
		limits := map[string]any{"apiVersion": "v1", "kind": "LimitRange", "metadata": meta(ns), "spec": map[string]any{"limits": []any{map[string]any{
			"type": "Container", "defaultRequest": map[string]any{"cpu": "50m", "memory": "64Mi"}, "default": map[string]any{"cpu": "250m", "memory": "256Mi"}}}}}
		return []any{
			map[string]any{"operation": "CreateOrUpdate", "object": quota},
			map[string]any{"operation": "CreateOrUpdate", "object": limits},
		}
	}
	remove := func(ns string) []any {
		ops := make([]any, 0, 2)
		for _, kind := range []string{"ResourceQuota", "LimitRange"} {
			ops = append(ops, map[string]any{"operation": "DeleteInBackground", "apiVersion": "v1", "kind": kind, "namespace": ns, "name": "namespace-defaults", "ignoreMissingObject": true})
		}
		return ops
	}
	want := make([]any, 0, 8)
	want = append(want, apply("a")...)
	want = append(want, apply("b")...)
	want = append(want, remove("c")...)
	want = append(want, remove("d")...)
	if diff := cmp.Diff(want, jsonStream(t, out["KUBERNETES_PATCH_PATH"])); diff != "" {
		t.Errorf("object operations (-want +got):\n%s", diff)
	}
	if out["VALUES_JSON_PATCH_PATH"] != "" {
		t.Errorf("values patch %q, want none", out["VALUES_JSON_PATCH_PATH"])
	}
}

func TestNamespaceDefaultsHookMissingValue(t *testing.T) {
	t.Parallel()
	values := `{"namespaceDefaults":{"quota":{"requestsCPU":"2"}}}`
	out, log, err := execScript(t, "modules/010-namespace-defaults/hooks/namespace-defaults", `[{"binding":"beforeHelm"}]`, values)
	if err == nil {
		t.Fatalf("no error, output %q", log)
	}
	if want := "no value .namespaceDefaults.quota.requestsMemory\n"; !strings.HasSuffix(log, want) {
		t.Errorf("output %q, want it to end with %q", log, want)
	}
	if out["KUBERNETES_PATCH_PATH"] != "" {
		t.Errorf("object operations %q, want none", out["KUBERNETES_PATCH_PATH"])
	}
}
