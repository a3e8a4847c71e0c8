package upkeep

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/helm/revisions"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// fakeReleases records what upkeep does to releases.
type fakeReleases struct {
	maintenance []string
	remediated  []string
	remedy      revisions.Remedy
	err         error
}

func (f *fakeReleases) SetMaintenance(name string, on bool) {
	f.maintenance = append(f.maintenance, map[bool]string{true: "on ", false: "off "}[on]+name)
}

func (f *fakeReleases) Remediate(_ context.Context, name string, r revisions.Remediation) (revisions.Remedy, error) {
	f.remediated = append(f.remediated, string(r)+" "+name)
	return f.remedy, f.err
}

type fakeEvents struct{ notes []string }

func (f *fakeEvents) ReleaseRemediated(name, note string) {
	f.notes = append(f.notes, name+": "+note)
}

type fakeRecorder struct{ on map[string]bool }

func (f *fakeRecorder) ModuleMaintenance(name string, on bool) { f.on[name] = on }

// modules discovers a (default remediation) and b (module.yaml: uninstall
// after 1 failure).
func modules(t *testing.T) []*module.Module {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"010-a/templates/cm.yaml": "kind: ConfigMap",
		"020-b/templates/cm.yaml": "kind: ConfigMap",
		"020-b/module.yaml":       "remediation: {strategy: uninstall, retries: 1}\n",
	} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mods, err := module.Discover(module.Options{ModulesDirs: []string{dir}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return mods.Modules()
}

// TestApplyMaintenance: entering and leaving maintenance reach the
// releases and the metric once per change; the modules that left are
// returned; every module's change is announced.
func TestApplyMaintenance(t *testing.T) {
	mods := modules(t)
	rel, rec := &fakeReleases{}, &fakeRecorder{on: map[string]bool{}}
	var changed []string
	u := New(Options{Releases: rel, Recorder: rec, Logger: slog.New(slog.DiscardHandler), Changed: func(n string) { changed = append(changed, n) }})

	if left := u.ApplyMaintenance(mods, map[string]bool{"a": true}); len(left) != 0 {
		t.Errorf("left = %v, want none", left)
	}
	if !u.InMaintenance("a") || u.InMaintenance("b") {
		t.Errorf("in maintenance: a %v, b %v; want a only", u.InMaintenance("a"), u.InMaintenance("b"))
	}
	u.ApplyMaintenance(mods, map[string]bool{"a": true})
	left := u.ApplyMaintenance(mods, nil)
	if diff := cmp.Diff([]string{"a"}, left); diff != "" {
		t.Errorf("left (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"on a", "off a"}, rel.maintenance); diff != "" {
		t.Errorf("releases' maintenance (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]bool{"a": false}, rec.on); diff != "" {
		t.Errorf("metric (-want +got):\n%s", diff)
	}
	if len(changed) != 6 {
		t.Errorf("changes announced = %v, want each module's on each of 3 applies", changed)
	}
}

// TestAfterDeploy: failures count toward the module's own remediation or
// the default; reaching it remediates once and notes it until a
// deployment succeeds; a failure before any revision remediates nothing.
func TestAfterDeploy(t *testing.T) {
	mods := modules(t)
	a, b := mods[0], mods[1]
	failed := errors.New("deploy failed")
	tests := map[string]struct {
		m      *module.Module
		fails  int
		remedy revisions.Remedy
		err    error
		want   []string
		note   string
		events []string
	}{
		"the default, not reached": {m: a, fails: 1},
		"the default, reached": {
			m: a, fails: 2, remedy: revisions.Remedy{Action: "rollback", Failed: 3, Target: 2},
			want: []string{"rollback a"}, note: "rolled back from failed revision 3 to revision 2 after 2 failed deployments",
			events: []string{"a: rolled back from failed revision 3 to revision 2 after 2 failed deployments"},
		},
		"the module's own": {
			m: b, fails: 1, remedy: revisions.Remedy{Action: "uninstall", Failed: 1},
			want: []string{"uninstall b"}, note: "failed revision 1 uninstalled after 1 failed deployments",
			events: []string{"b: failed revision 1 uninstalled after 1 failed deployments"},
		},
		"no failed revision": {m: b, fails: 1, want: []string{"uninstall b"}},
		"remediation fails": {
			m: b, fails: 1, remedy: revisions.Remedy{Action: "uninstall", Failed: 1}, err: errors.New("no"),
			want: []string{"uninstall b"}, note: "failed revision 1 uninstalled after 1 failed deployments failed: no",
			events: []string{"b: failed revision 1 uninstalled after 1 failed deployments failed: no"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rel, ev := &fakeReleases{remedy: tc.remedy, err: tc.err}, &fakeEvents{}
			u := New(Options{Releases: rel, Events: ev, Logger: slog.New(slog.DiscardHandler), Remediation: "rollback", RemediationRetries: 2})
			for range tc.fails {
				u.AfterDeploy(t.Context(), tc.m, failed)
			}
			if diff := cmp.Diff(tc.want, rel.remediated); diff != "" {
				t.Errorf("remediations (-want +got):\n%s", diff)
			}
			if got := u.Remediation(tc.m.Name()); got != tc.note {
				t.Errorf("Remediation = %q, want %q", got, tc.note)
			}
			if diff := cmp.Diff(tc.events, ev.notes); diff != "" {
				t.Errorf("Events (-want +got):\n%s", diff)
			}
			u.AfterDeploy(t.Context(), tc.m, nil)
			if got := u.Remediation(tc.m.Name()); got != "" {
				t.Errorf("Remediation after a deployment succeeded = %q, want none", got)
			}
		})
	}
}

// TestAfterDeployCountStartsOver: after a remediation the count starts
// over; a success in between resets it.
func TestAfterDeployCountStartsOver(t *testing.T) {
	a := modules(t)[0]
	rel := &fakeReleases{remedy: revisions.Remedy{Action: "rollback", Failed: 2, Target: 1}}
	u := New(Options{Releases: rel, Logger: slog.New(slog.DiscardHandler), Remediation: "rollback", RemediationRetries: 2})
	failed := errors.New("deploy failed")
	for _, err := range []error{failed, nil, failed, failed, failed} {
		u.AfterDeploy(t.Context(), a, err)
	}
	if diff := cmp.Diff([]string{"rollback a"}, rel.remediated); diff != "" {
		t.Errorf("remediations (-want +got):\n%s", diff)
	}
	u.AfterDeploy(t.Context(), a, failed)
	if len(rel.remediated) != 2 {
		t.Errorf("remediations after two more failures = %v, want a second", rel.remediated)
	}
}
