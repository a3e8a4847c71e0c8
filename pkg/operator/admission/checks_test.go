package admission

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/store"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// discover finds the modules of a tree with modules a and b, each with
// one hook, and builds their values store.
func discover(t *testing.T) (*module.Set, *store.Store) {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"modules/values.yaml":     "aEnabled: true\nbEnabled: true\n",
		"modules/010-a/hooks/mod": "",
		"modules/020-b/hooks/mod": "",
	} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o700); err != nil { //nolint:gosec // G306: a hook must be executable
			t.Fatal(err)
		}
	}
	mods, err := module.Discover(module.Options{ModulesDirs: []string{filepath.Join(dir, "modules")}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.New(mods)
	if err != nil {
		t.Fatal(err)
	}
	return mods, st
}

// blockingChecker's module b hook has a settings check that runs until
// released, counting how many run at once.
type blockingChecker struct {
	release chan struct{}
	started chan struct{}
	mu      sync.Mutex
	running int
	most    int
}

func (c *blockingChecker) HasSettingsCheck(_ context.Context, path string) (bool, error) {
	return strings.HasSuffix(path, filepath.Join("020-b", "hooks", "mod")), nil
}

func (c *blockingChecker) CachedSettingsCheck(string, values.Values) (hook.SettingsCheckResult, bool) {
	return hook.SettingsCheckResult{}, false
}

func (c *blockingChecker) CheckSettings(ctx context.Context, _ string, _ values.Values) (hook.SettingsCheckResult, error) {
	c.mu.Lock()
	c.running++
	c.most = max(c.most, c.running)
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.running--
		c.mu.Unlock()
	}()
	c.started <- struct{}{}
	select {
	case <-c.release:
		return hook.SettingsCheckResult{Valid: true}, nil
	case <-ctx.Done():
		return hook.SettingsCheckResult{}, ctx.Err()
	}
}

// TestAdmissionSettingsChecksAreBounded: admission requests run at most
// admissionCheckSlots settings checks at once; one that finds them taken
// for its whole time is refused with a message that says so, while the
// operator's own check of a configuration it applies takes no slot.
func TestAdmissionSettingsChecksAreBounded(t *testing.T) {
	mods, st := discover(t)
	checker := &blockingChecker{release: make(chan struct{}), started: make(chan struct{}, 16)}
	c := NewChecks(mods, st, checker, nil, slog.New(slog.DiscardHandler))

	// Fill the slots with checks that run until released.
	c.admissionTime = time.Minute
	results := make(chan error, admissionCheckSlots)
	for i := range admissionCheckSlots {
		go func() {
			_, err := c.CheckConfigMap(map[string]string{"b": fmt.Sprintf("replicas: %d\n", i+1)})
			results <- err
		}()
		<-checker.started
	}
	c.admissionTime = 300 * time.Millisecond

	_, err := c.CheckConfigMap(map[string]string{"b": "replicas: 9\n"})
	if err == nil || !strings.Contains(err.Error(), "every admission check slot stayed busy") {
		t.Fatalf("admission request with every slot taken: %v, want refused as busy", err)
	}

	// The operator's own check runs beside the held slots.
	done := make(chan error)
	go func() {
		moduleErrs, globalErr := c.Validate(&config.Config{Modules: map[string]values.Values{"b": {"replicas": float64(4)}}}, Own)
		done <- errors.Join(globalErr, moduleErrs["b"])
	}()
	<-checker.started
	close(checker.release)
	if err := <-done; err != nil {
		t.Fatalf("configuration checked by the operator refused while admission slots were taken: %v", err)
	}
	for range admissionCheckSlots {
		if err := <-results; err != nil {
			t.Errorf("held admission check: %v", err)
		}
	}
	if checker.most != admissionCheckSlots+1 {
		t.Errorf("at most %d checks ran at once, want the %d admission slots and the operator's own", checker.most, admissionCheckSlots+1)
	}
}

func TestAcceptable(t *testing.T) {
	tests := []struct {
		name                   string
		haveConfig, moduleErrs bool
		globalErr              error
		want                   bool
	}{
		{"first, valid", false, false, nil, true},
		{"first, invalid module sections: taken, those modules skipped", false, true, nil, true},
		{"later, invalid module sections", true, true, nil, false},
		{"invalid global section", false, false, errors.New("bad"), false},
		{"later, valid", true, false, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Acceptable(tt.haveConfig, tt.moduleErrs, tt.globalErr); got != tt.want {
				t.Errorf("Acceptable = %v, want %v", got, tt.want)
			}
		})
	}
}
