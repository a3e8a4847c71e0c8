package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/values"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/") //nolint:gochecknoglobals // the test binary's -update flag

// fakeSource is a Source over fixed data.
type fakeSource struct {
	ready     bool
	conds     []status.Condition
	modules   []status.ModuleStatus
	queues    []status.QueueStatus
	global    values.Values
	config    values.Values
	values    map[string]values.Values
	configs   map[string]values.Values
	rendered  map[string]*helm.Rendered
	renderErr error
}

func (f *fakeSource) Ready() bool                                  { return f.ready }
func (f *fakeSource) Modules() []status.ModuleStatus               { return f.modules }
func (f *fakeSource) Conditions() []status.Condition               { return f.conds }
func (f *fakeSource) QueueStatuses() []status.QueueStatus          { return f.queues }
func (f *fakeSource) GlobalValues() values.Values                  { return f.global }
func (f *fakeSource) GlobalConfig() values.Values                  { return f.config }
func (f *fakeSource) ModuleValues(n string) (values.Values, error) { return lookup(f.values, n) }
func (f *fakeSource) ModuleConfig(n string) (values.Values, error) { return lookup(f.configs, n) }

func (f *fakeSource) RenderModule(_ context.Context, name string) (*helm.Rendered, error) {
	if f.renderErr != nil {
		return nil, f.renderErr
	}
	return lookup(f.rendered, name)
}

func lookup[V any](m map[string]V, name string) (V, error) {
	v, ok := m[name]
	if !ok {
		var zero V
		return zero, fmt.Errorf("no module %q", name)
	}
	return v, nil
}

// newFakeSource returns a converged operator with three modules, one of
// them failing, and two queues.
func newFakeSource() *fakeSource {
	queued := time.Date(2026, 5, 4, 10, 30, 0, 0, time.UTC)
	return &fakeSource{
		ready: true,
		modules: []status.ModuleStatus{
			{Name: "cert-manager", Enabled: true, By: status.SourceConfigMap, Phase: status.PhaseRunning, Revision: 3,
				Namespace: "cert-manager", Message: "waiting for Deployment cert-manager/webhook: Available: 1/3"},
			{Name: "ingress", Enabled: true, By: status.SourceStaticCommon, Phase: status.PhaseFailed, Revision: 1,
				LastError: "upgrade release \"ingress\": <script>alert(1)</script>"},
			{Name: "legacy", By: status.SourceDefault, Phase: status.PhaseDisabled},
		},
		queues: []status.QueueStatus{
			{Name: "main", Status: "running", Tasks: []status.TaskStatus{
				{Description: "ModuleRun ingress", Queued: queued, Failures: 4, LastError: "helm: timeout"},
				{Description: "Converge", Queued: queued.Add(time.Second)},
			}},
			{Name: "monitors", Status: "idle", Tasks: []status.TaskStatus{}},
		},
		global:  values.Values{"clusterName": "test", "enabledModules": []any{"cert-manager", "ingress"}},
		config:  values.Values{"clusterName": "test"},
		values:  map[string]values.Values{"ingress": {"global": map[string]any{"clusterName": "test"}, "ingress": map[string]any{"replicas": 2}}},
		configs: map[string]values.Values{"ingress": {"replicas": 2}},
		rendered: map[string]*helm.Rendered{"ingress": {
			Manifest: "# Source: ingress/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ingress\n",
			Hooks:    []string{"# Source: ingress/templates/hook.yaml\napiVersion: v1\nkind: Secret\n"},
			Checksum: "abc123",
		}},
	}
}

// errRender stands for a chart that does not render.
var errRender = errors.New(`render chart "ingress": template: bad`)

// withConditions gives the source a deleted and a rejected ConfigMap and
// foreign releases.
func withConditions(f *fakeSource) {
	since := time.Date(2026, 5, 4, 11, 0, 0, 0, time.UTC)
	f.conds = []status.Condition{
		{Type: status.ConditionConfigMapMissing, Since: since,
			Message: "ConfigMap ns/addon-operator was deleted; the last valid configuration stays in force"},
		{Type: status.ConditionConfigMapInvalid, Since: since, Keys: []string{"fooEnabled", "global"},
			Message: `key "fooEnabled": enabled flag is "yes"`},
		{Type: status.ConditionForeignReleases, Since: since, Releases: []string{"gone", "other"},
			Message: "releases not created by addon-operator are never touched"},
	}
}
