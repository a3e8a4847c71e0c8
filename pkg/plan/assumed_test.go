package plan

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// repoOffline plans the repository's own modules and global hooks.
func repoOffline(t *testing.T) *Offline {
	t.Helper()
	root := filepath.Join("..", "..")
	x, err := NewOffline(module.Options{
		ModulesDirs:    []string{filepath.Join(root, "modules")},
		GlobalHooksDir: filepath.Join(root, "global-hooks"),
	}, "", nil, &hook.Executor{})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func listed(t *testing.T, x *Offline, name string) ModuleInfo {
	t.Helper()
	list, err := x.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i := range list {
		if list[i].Name == name {
			return list[i]
		}
	}
	t.Fatalf("no module %q in the plan", name)
	return ModuleInfo{}
}

// TestAssumedHookValues: node-exporter's enabled script reads
// global.discovery.nodeCount, which the discovery global hook sets from the
// cluster's Nodes. Offline no hook runs, so the script sees the schema
// default 0 and writes false, while the operator on a cluster with Nodes
// enables it: the plan says its answer rests on that default instead of
// stating it as the operator's decision. A --set for the value is no guess.
func TestAssumedHookValues(t *testing.T) {
	got := listed(t, repoOffline(t), "node-exporter")
	if got.Enabled {
		t.Fatalf("node-exporter with nodeCount at its default: enabled: %+v", got)
	}
	if diff := cmp.Diff([]string{"global.discovery.nodeCount=0"}, got.Assumed); diff != "" {
		t.Errorf("assumed (-want +got):\n%s", diff)
	}
	if !strings.Contains(got.Reason, "global.discovery.nodeCount=0") || !strings.Contains(got.Reason, "global hooks set from the cluster") {
		t.Errorf("reason does not say the answer rests on a hook-set default: %q", got.Reason)
	}

	// Modules whose scripts did not run assume nothing.
	if echo := listed(t, repoOffline(t), "echo-service"); echo.Assumed != nil {
		t.Errorf("echo-service has no enabled script, yet assumes %v", echo.Assumed)
	}

	x := repoOffline(t)
	if err := x.Override(values.Values{"global": map[string]any{"discovery": map[string]any{"nodeCount": 1}}}); err != nil {
		t.Fatal(err)
	}
	got = listed(t, x, "node-exporter")
	if !got.Enabled || got.Assumed != nil || strings.Contains(got.Reason, "guess") {
		t.Errorf("node-exporter with global.discovery.nodeCount=1 given: %+v", got)
	}
}
