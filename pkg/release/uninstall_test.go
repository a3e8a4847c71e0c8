package release

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/module"
)

// hookTimeoutReleases records the bound UninstallHooks was given, -1 for
// a plain Uninstall.
type hookTimeoutReleases struct {
	fakeReleases
	got time.Duration
}

func (f *hookTimeoutReleases) Uninstall(context.Context, string) (bool, error) {
	f.got = -1
	return true, nil
}

func (f *hookTimeoutReleases) UninstallHooks(_ context.Context, _ string, timeout time.Duration) (bool, error) {
	f.got = timeout
	return true, nil
}

// A module's chartHookTimeout bounds its delete hooks as it bounds its
// install and upgrade hooks; without one the client's own bound applies.
func TestUninstallModuleBoundsDeleteHooks(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"bounded/module.yaml": "chartHookTimeout: 7s\n", "unbounded/Chart.yaml": "apiVersion: v2\nname: u\nversion: 0.1.0\n"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Join(filepath.Dir(p), "templates"), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	set, err := module.Discover(module.Options{ModulesDirs: []string{dir}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]time.Duration{"bounded": 7 * time.Second, "unbounded": -1} {
		rels := &hookTimeoutReleases{}
		r := New(Options{Releases: rels, Clock: clock.RealClock{}, Logger: slog.New(slog.DiscardHandler)})
		m, _ := set.Module(name)
		if err := r.UninstallModule(t.Context(), m); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rels.got != want {
			t.Errorf("%s: delete hooks bounded by %v, want %v", name, rels.got, want)
		}
	}
}
