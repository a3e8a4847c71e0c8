package helm

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"

	"github.com/addon-operator/addon-operator/pkg/helm/modulechart"
)

func TestApplyLifecycle(t *testing.T) {
	env := newTestEnv(t)
	dir := echoChart(t, "one")
	ctx := t.Context()

	if _, err := env.client.Status(ctx, "echo"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Status before install: err = %v, want ErrNotFound", err)
	}

	installed, err := env.client.Apply(ctx, echoRelease(dir, "hello"))
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	if installed.Rendered == nil || installed.Rendered.Manifest != installed.Manifest {
		t.Errorf("install outcome's rendered chart = %+v, want the installed manifest", installed.Rendered)
	}
	want := Outcome{Revision: 1, Checksum: installed.Checksum, Reason: ReasonNoRelease, Manifest: installed.Manifest, Fresh: true, Rendered: installed.Rendered}
	if diff := cmp.Diff(want, installed); diff != "" {
		t.Errorf("install outcome (-want +got):\n%s", diff)
	}
	if !strings.Contains(installed.Manifest, `greeting: "hello"`) {
		t.Errorf("install outcome manifest lacks the greeting:\n%s", installed.Manifest)
	}
	status, err := env.client.Status(ctx, "echo")
	if err != nil {
		t.Fatalf("Status: %v", err)
	}
	if diff := cmp.Diff(Status{Revision: 1, State: "deployed", Checksum: installed.Checksum, Owned: true}, status); diff != "" {
		t.Errorf("status after install (-want +got):\n%s", diff)
	}

	again, err := env.client.Apply(ctx, echoRelease(dir, "hello"))
	if err != nil {
		t.Fatalf("second apply: %v", err)
	}
	if diff := cmp.Diff(Outcome{Revision: 1, Checksum: installed.Checksum, Skipped: true, Manifest: installed.Manifest, Rendered: again.Rendered}, again); diff != "" {
		t.Errorf("second apply outcome (-want +got):\n%s", diff)
	}

	upgraded, err := env.client.Apply(ctx, echoRelease(dir, "bye"))
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	if upgraded.Revision != 2 || upgraded.Reason != ReasonChecksumChanged || upgraded.Checksum == installed.Checksum {
		t.Errorf("upgrade outcome = %+v, want revision 2, reason %s, a new checksum", upgraded, ReasonChecksumChanged)
	}
	rel, err := env.store.Last("echo")
	if err != nil {
		t.Fatal(err)
	}
	checkStoredRelease(t, rel, upgraded.Checksum, "bye")

	for _, wantExisted := range []bool{true, false} {
		existed, err := env.client.Uninstall(ctx, "echo")
		if err != nil || existed != wantExisted {
			t.Errorf("Uninstall = %v, %v; want %v, nil", existed, err, wantExisted)
		}
	}
	if _, err := env.client.Status(ctx, "echo"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Status after uninstall: err = %v, want ErrNotFound", err)
	}
}

// checkStoredRelease checks what Apply stored: our labels on the release,
// the object labels in its manifest, the operator's values as given.
func checkStoredRelease(t *testing.T, rel *release.Release, checksum, greeting string) {
	t.Helper()
	if rel.Info.Status != release.StatusDeployed {
		t.Errorf("status = %s, want deployed", rel.Info.Status)
	}
	if rel.Labels[LabelManagedBy] != ManagedByValue || rel.Labels[LabelChecksum] != checksum {
		t.Errorf("release labels = %v, want %s=%s and %s=%s", rel.Labels, LabelManagedBy, ManagedByValue, LabelChecksum, checksum)
	}
	for _, want := range []string{"addon-operator.io/managed-by: addon-operator", "addon-operator.io/module: echo", `greeting: "` + greeting + `"`} {
		if !strings.Contains(rel.Manifest, want) {
			t.Errorf("manifest lacks %q:\n%s", want, rel.Manifest)
		}
	}
	wantConfig := map[string]any{"global": map[string]any{}, "echo": map[string]any{"greeting": greeting}}
	if diff := cmp.Diff(wantConfig, rel.Config); diff != "" {
		t.Errorf("stored values (-want +got):\n%s", diff)
	}
}

func TestRenderChecksum(t *testing.T) {
	env := newTestEnv(t)
	render := func(hookData, greeting string) *Rendered {
		t.Helper()
		r, err := env.client.Render(t.Context(), echoRelease(echoChart(t, hookData), greeting))
		if err != nil {
			t.Fatalf("Render: %v", err)
		}
		return r
	}
	base := render("one", "hello")
	if len(base.Checksum) != checksumLen || len(base.Hooks) != 1 || !strings.HasPrefix(base.Hooks[0], "# Source: echo/templates/hook.yaml\n") {
		t.Fatalf("Render = %+v, want a %d-character checksum and one hook with its source", base, checksumLen)
	}
	if same := render("one", "hello"); same.Checksum != base.Checksum {
		t.Errorf("same inputs, checksums %s and %s", base.Checksum, same.Checksum)
	}
	hookOnly := render("two", "hello")
	if hookOnly.Manifest != base.Manifest {
		t.Fatalf("a hook change changed the manifest:\n%s\n---\n%s", base.Manifest, hookOnly.Manifest)
	}
	if hookOnly.Checksum == base.Checksum {
		t.Error("a change in a hook template alone did not change the checksum")
	}
	if values := render("one", "bye"); values.Checksum == base.Checksum {
		t.Error("a change in values did not change the checksum")
	}
}

func TestApplyHookOnlyChangeRedeploys(t *testing.T) {
	env := newTestEnv(t)
	if _, err := env.client.Apply(t.Context(), echoRelease(echoChart(t, "one"), "hello")); err != nil {
		t.Fatalf("install: %v", err)
	}
	out, err := env.client.Apply(t.Context(), echoRelease(echoChart(t, "two"), "hello"))
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if out.Skipped || out.Reason != ReasonChecksumChanged || out.Revision != 2 {
		t.Errorf("outcome = %+v, want an upgrade to revision 2 for %s", out, ReasonChecksumChanged)
	}
}

func TestApplyDoesNotModifyValues(t *testing.T) {
	env := newTestEnv(t)
	r := echoRelease(echoChart(t, "one"), "hello")
	before, err := modulechart.CopyValues(r.Values)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.client.Apply(t.Context(), r); err != nil {
		t.Fatalf("apply: %v", err)
	}
	if diff := cmp.Diff(before, r.Values); diff != "" {
		t.Errorf("values changed by Apply (-before +after):\n%s", diff)
	}
}

func TestApplyRecoversInterruptedRelease(t *testing.T) {
	tests := []struct {
		name  string
		state release.Status
		// replace turns the deployed revision itself into the interrupted
		// one (an install that never finished); otherwise a new revision is
		// added (an upgrade, rollback or uninstall that never finished).
		replace      bool
		wantRevision int
		// wantAfter is the interrupted revision's final state: failed, or
		// superseded when it was the only one and Helm upgraded from it.
		wantAfter release.Status
	}{
		{name: "pending install", state: release.StatusPendingInstall, replace: true, wantRevision: 2, wantAfter: release.StatusSuperseded},
		{name: "pending upgrade", state: release.StatusPendingUpgrade, wantRevision: 3, wantAfter: release.StatusFailed},
		{name: "pending rollback", state: release.StatusPendingRollback, wantRevision: 3, wantAfter: release.StatusFailed},
		{name: "uninstalling", state: release.StatusUninstalling, replace: true, wantRevision: 2, wantAfter: release.StatusSuperseded},
		{name: "unknown", state: release.StatusUnknown, wantRevision: 3, wantAfter: release.StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t)
			r := echoRelease(echoChart(t, "one"), "hello")
			if _, err := env.client.Apply(t.Context(), r); err != nil {
				t.Fatalf("install: %v", err)
			}
			interrupted := interrupt(t, env, tt.state, tt.replace)

			out, err := env.client.Apply(t.Context(), r)
			if err != nil {
				t.Fatalf("apply after interruption: %v", err)
			}
			if !out.Recovered || out.Reason != ReasonNotDeployed || out.Revision != tt.wantRevision {
				t.Errorf("outcome = %+v, want recovered, %s, revision %d", out, ReasonNotDeployed, tt.wantRevision)
			}
			got, err := env.store.Get("echo", interrupted)
			if err != nil {
				t.Fatal(err)
			}
			if got.Info.Status != tt.wantAfter {
				t.Errorf("interrupted revision %d is %s, want %s", interrupted, got.Info.Status, tt.wantAfter)
			}
			if status, err := env.client.Status(t.Context(), "echo"); err != nil || status.State != "deployed" {
				t.Errorf("Status = %+v, %v; want deployed", status, err)
			}
		})
	}
}

// interrupt leaves the release as a killed operation would, and returns
// the interrupted revision.
func interrupt(t *testing.T, env *testEnv, state release.Status, replace bool) int {
	t.Helper()
	last, err := env.store.Last("echo")
	if err != nil {
		t.Fatal(err)
	}
	if replace {
		last.SetStatus(state, "interrupted by the test")
		if err := env.store.Update(last); err != nil {
			t.Fatal(err)
		}
		return last.Version
	}
	next := *last
	info := *last.Info
	next.Info, next.Version = &info, last.Version+1
	next.SetStatus(state, "interrupted by the test")
	if err := env.store.Create(&next); err != nil {
		t.Fatal(err)
	}
	return next.Version
}

func TestApplyReinstallsOverUninstalledHistory(t *testing.T) {
	env := newTestEnv(t)
	r := echoRelease(echoChart(t, "one"), "hello")
	if _, err := env.client.Apply(t.Context(), r); err != nil {
		t.Fatalf("install: %v", err)
	}
	uninstall := action.NewUninstall(env.config(nil))
	uninstall.KeepHistory = true
	if _, err := uninstall.Run("echo"); err != nil {
		t.Fatalf("uninstall keeping history: %v", err)
	}
	out, err := env.client.Apply(t.Context(), r)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if out.Reason != ReasonNotDeployed || out.Revision != 2 {
		t.Errorf("outcome = %+v, want %s, revision 2", out, ReasonNotDeployed)
	}
	history, err := env.store.History("echo")
	if err != nil {
		t.Fatal(err)
	}
	releaseutil.SortByRevision(history)
	states := make([]release.Status, 0, len(history))
	for _, rel := range history {
		states = append(states, rel.Info.Status)
	}
	if diff := cmp.Diff([]release.Status{release.StatusSuperseded, release.StatusDeployed}, states); diff != "" {
		t.Errorf("history states (-want +got):\n%s", diff)
	}
}

func TestOwnedListsOnlyLabelledReleases(t *testing.T) {
	env := newTestEnv(t)
	for _, name := range []string{"zeta", "alpha"} {
		r := echoRelease(echoChart(t, "one"), "hello")
		r.Name = name
		if _, err := env.client.Apply(t.Context(), r); err != nil {
			t.Fatalf("apply %s: %v", name, err)
		}
	}
	install := action.NewInstall(env.config(nil))
	install.ReleaseName, install.Namespace = "foreign", testNamespace
	foreign := &chart.Chart{Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "foreign", Version: "1.0.0"}}
	if _, err := install.RunWithContext(t.Context(), foreign, nil); err != nil {
		t.Fatalf("install foreign release: %v", err)
	}

	owned, err := env.client.Owned(t.Context())
	if err != nil {
		t.Fatalf("Owned: %v", err)
	}
	if diff := cmp.Diff([]string{"alpha", "zeta"}, owned); diff != "" {
		t.Errorf("owned releases (-want +got):\n%s", diff)
	}
	if status, err := env.client.Status(t.Context(), "foreign"); err != nil || status.Owned {
		t.Errorf("Status(foreign) = %+v, %v; want not owned", status, err)
	}
}

func TestApplyRenderError(t *testing.T) {
	env := newTestEnv(t)
	dir := writeFiles(t, map[string]string{"templates/cm.yaml": "{{ .Values.echo.missing.deeper }}\n"})
	_, err := env.client.Apply(t.Context(), echoRelease(dir, "hello"))
	if err == nil || !strings.Contains(err.Error(), `render release "echo"`) {
		t.Fatalf("Apply = %v, want a render error", err)
	}
	if _, err := env.client.Status(t.Context(), "echo"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a failed render left a release: Status err = %v", err)
	}
}

// TestOutcomeManifestIsTheRevisionInForce: drift checks and healing compare
// the cluster with Outcome.Manifest, so it must be rendered with the
// revision's own .Release values, not those of the checksum render.
func TestOutcomeManifestIsTheRevisionInForce(t *testing.T) {
	env := newTestEnv(t)
	dir := writeFiles(t, map[string]string{"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: rev
data:
  revision: {{ .Release.Revision | quote }}
  install: {{ .Release.IsInstall | quote }}
  greeting: {{ .Values.rev.greeting | quote }}
`})
	revRelease := func(greeting string) Release {
		return Release{Name: "rev", ChartDir: dir, Values: map[string]any{"global": map[string]any{}, "rev": map[string]any{"greeting": greeting}}}
	}
	steps := []struct {
		greeting string
		want     []string
	}{
		{"hello", []string{`revision: "1"`, `install: "true"`}},
		{"bye", []string{`revision: "2"`, `install: "false"`}},
		{"bye", []string{`revision: "2"`, `install: "false"`}}, // skipped: still revision 2
	}
	for i, step := range steps {
		out, err := env.client.Apply(t.Context(), revRelease(step.greeting))
		if err != nil {
			t.Fatalf("step %d: %v", i+1, err)
		}
		for _, want := range step.want {
			if !strings.Contains(out.Manifest, want) {
				t.Errorf("step %d (revision %d, skipped %v): manifest lacks %s:\n%s", i+1, out.Revision, out.Skipped, want, out.Manifest)
			}
		}
	}
}
