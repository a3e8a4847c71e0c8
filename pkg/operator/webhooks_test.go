package operator

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/binding"
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/operator/admission"
	"github.com/addon-operator/addon-operator/pkg/operator/options"
	"github.com/addon-operator/addon-operator/pkg/webhook"
)

// fakeWebhooks records registrations into the runner's call list, so
// their order against hook runs and Helm calls shows.
type fakeWebhooks struct{ rel *fakeReleaser }

func (f fakeWebhooks) Set(_ context.Context, owner string, e webhook.Entries) error {
	names := make([]string, 0, len(e.Admission))
	for i := range e.Admission {
		names = append(names, e.Admission[i].Binding.Name)
	}
	f.rel.record("webhooks:" + owner + ":" + strings.Join(names, ","))
	return nil
}

func (f fakeWebhooks) Serve(owner string, _ webhook.Entries) error {
	f.rel.record("webhooks-served:" + owner)
	return nil
}

func (f fakeWebhooks) Remove(_ context.Context, owner string) error {
	f.rel.record("webhooks-removed:" + owner)
	return nil
}

func (fakeWebhooks) Run(context.Context) error               { return nil }
func (fakeWebhooks) RunConfigurations(context.Context) error { return nil }
func (fakeWebhooks) Problem() string                         { return "" }

const webhookHookConfig = `configVersion: v1
beforeHelm: 1
kubernetesValidating:
- name: check.example.com
  rules: [{apiGroups: [example.com], apiVersions: [v1], resources: [things], operations: [CREATE]}]
`

func TestWebhooksRegisteredOnceBeforeTheRelease(t *testing.T) {
	runner := &fakeRunner{configs: map[string]string{"mod": webhookHookConfig, "global": "configVersion: v1\nonStartup: 1\n"}}
	o, rel := newTestOperator(t, runner)
	o.webhooks = o.webhooksWith(fakeWebhooks{rel}, admission.StandbyOptions{})
	runUntil(t, o, o.Ready)
	got := runner.recorded()
	want := []string{
		"global:onStartup",
		"a:beforeHelm", "webhooks:a:check.example.com", "helm:a",
		// b declares the same webhook name; the fake does not refuse it.
		"b:beforeHelm", "webhooks:b:check.example.com",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	// Another run of a does not register again.
	if _, err := o.runModule(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	if n := countPrefix(runner.recorded(), "webhooks:a"); n != 1 {
		t.Errorf("a registered %d times, want once", n)
	}
}

func TestModuleDeleteRemovesWebhooksBeforeUninstall(t *testing.T) {
	runner := &fakeRunner{configs: map[string]string{"mod": webhookHookConfig + "afterDeleteHelm: 1\n", "global": "configVersion: v1\nonStartup: 1\n"}}
	o, rel := newTestOperator(t, runner)
	o.webhooks = o.webhooksWith(fakeWebhooks{rel}, admission.StandbyOptions{})
	rel.status = map[string]helm.Status{"a": {Owned: true}}
	m, _ := o.modules.Module("a")
	if err := o.webhooks.Enable(t.Context(), m, []*binding.Hook{checkHook(t)}); err != nil {
		t.Fatal(err)
	}
	if err := o.moduleDelete(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	want := []string{"webhooks:a:check.example.com", "webhooks-removed:a", "uninstall:a", "a:afterDeleteHelm"}
	if diff := cmp.Diff(want, runner.recorded()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if err := o.moduleDelete(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	if n := countPrefix(runner.recorded(), "webhooks-removed"); n != 1 {
		t.Errorf("removed %d times, want once", n)
	}
}

// checkHook is a hook with one validating binding.
func checkHook(t *testing.T) *binding.Hook {
	t.Helper()
	cfg, err := hook.ParseConfig("check", []byte(webhookHookConfig), hook.Module)
	if err != nil {
		t.Fatal(err)
	}
	return &binding.Hook{Path: "/m/hooks/check", Name: "hooks/check", Config: cfg}
}

func countPrefix(calls []string, prefix string) int {
	n := 0
	for _, c := range calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

func TestCheckConfigMap(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"modules/010-echo-service/templates/cm.yaml":          "kind: ConfigMap",
		"modules/010-echo-service/openapi/config-values.yaml": "type: object\nadditionalProperties: false\nproperties:\n  replicas: {type: integer}\n",
		"modules/020-cert-manager/templates/cm.yaml":          "kind: ConfigMap",
		"global-hooks/openapi/config-values.yaml":             "type: object\nproperties:\n  domain: {type: string}\n",
	})
	opts := options.Default()
	opts.Discovery.ModulesDirs, opts.Discovery.GlobalHooksDir, opts.Namespace = filepath.Join(dir, "modules"), filepath.Join(dir, "global-hooks"), "ns"
	o, err := New(opts, Deps{Hooks: &fakeRunner{}, Releases: &fakeReleaser{}, Config: (&fakeConfig{}).source, Clock: clock.RealClock{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		data         map[string]string
		wantErr      []string // parts of the error, in order
		wantWarnings []string
	}{
		{name: "valid", data: map[string]string{"echoService": "replicas: 2", "global": "domain: example.com"}},
		{name: "type error", data: map[string]string{"echoService": "replicas: two"}, wantErr: []string{`"echoService"`, "replicas", "integer", "string"}},
		{name: "unknown field", data: map[string]string{"echoService": "replica: 2"}, wantErr: []string{`"echoService"`, "replica"}},
		{name: "global type error", data: map[string]string{"global": "domain: 3"}, wantErr: []string{`"global"`, "domain", "string"}},
		{name: "invalid yaml", data: map[string]string{"echoService": "replicas: [2"}, wantErr: []string{`"echoService"`}},
		{name: "bad enabled flag", data: map[string]string{"echoServiceEnabled": "yes"}, wantErr: []string{`"echoServiceEnabled"`, `want "true" or "false"`}},
		{
			name: "unknown modules warn with a suggestion", data: map[string]string{"echoServce": "replicas: 1", "certManagerrEnabled": "true", "zzz": "a: 1"},
			wantWarnings: []string{
				`ConfigMap key "certManagerrEnabled" names no module; did you mean "certManagerEnabled"?`,
				`ConfigMap key "echoServce" names no module; did you mean "echoService"?`,
				`ConfigMap key "zzz" names no module`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			warnings, err := o.checks.CheckConfigMap(tt.data)
			if diff := cmp.Diff(tt.wantWarnings, warnings); diff != "" {
				t.Errorf("warnings (-want +got):\n%s", diff)
			}
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Errorf("error %v, want none", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			msg, at := err.Error(), 0
			for _, part := range tt.wantErr {
				i := strings.Index(msg[at:], part)
				if i < 0 {
					t.Fatalf("error %q lacks %q (in order)", msg, part)
				}
				at += i
			}
		})
	}
}

// capturingRunner keeps the last run it was asked for.
type capturingRunner struct {
	fakeRunner
	last hook.Run
}

func (c *capturingRunner) Run(ctx context.Context, r hook.Run) (*hook.Result, error) {
	c.last = r
	res, err := c.fakeRunner.Run(ctx, r)
	if err == nil {
		res.AdmissionResponse = []byte(`{"allowed": true}`)
	}
	return res, err
}

func TestWebhookRunGetsSnapshotsAndValues(t *testing.T) {
	runner := &capturingRunner{}
	o, _ := newTestOperatorWith(t, &runner.fakeRunner, func(d *Deps) { d.Hooks = runner })
	cfg, err := hook.ParseConfig("check", []byte(`configVersion: v1
kubernetes:
- {name: things, kind: ConfigMap, executeHookOnEvent: []}
kubernetesValidating:
- name: check.example.com
  includeSnapshotsFrom: [things]
  rules: [{apiGroups: [""], apiVersions: [v1], resources: [configmaps], operations: [CREATE]}]
`), hook.Module)
	if err != nil {
		t.Fatal(err)
	}
	h := &binding.Hook{Path: "/m/hooks/check", Name: "hooks/check", Config: cfg}
	m, _ := o.modules.Module("a")
	o.monitors = &fakeMonitors{objects: map[string][]hook.FilteredObject{binding.ID("a", h, hook.Kubernetes, 0): {obj("x")}}}
	srv := &servedWebhooks{}
	if err := o.webhooksWith(srv, admission.StandbyOptions{}).Enable(t.Context(), m, []*binding.Hook{h}); err != nil {
		t.Fatal(err)
	}
	e, _ := srv.get("a")
	if len(e.Admission) != 1 || e.Admission[0].Owner != "a" || e.Admission[0].Binding.Name != "check.example.com" {
		t.Fatalf("entries %+v, want the one validating binding of module a", e)
	}
	review := []byte(`{"request":{"uid":"u"}}`)
	res, err := e.Admission[0].Run(t.Context(), hook.BindingContext{Binding: "check.example.com", Type: hook.TypeValidating, Review: review})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.AdmissionResponse) != `{"allowed": true}` {
		t.Errorf("response %q", res.AdmissionResponse)
	}
	got := runner.last
	if got.Kind != hook.RunWebhook || got.Module != "a" || got.Binding != "check.example.com" || len(got.Contexts) != 1 {
		t.Fatalf("run %+v, want one webhook run of module a", got)
	}
	want := hook.BindingContext{Binding: "check.example.com", Type: hook.TypeValidating, Review: review,
		Snapshots: map[string][]hook.FilteredObject{"things": {obj("x")}}}
	if diff := cmp.Diff(want, got.Contexts[0]); diff != "" {
		t.Errorf("binding context (-want +got):\n%s", diff)
	}
	if _, ok := got.Values["a"]; !ok {
		t.Errorf("values %v lack the module's key", got.Values)
	}
}
