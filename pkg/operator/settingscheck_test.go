package operator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// checkingRunner is a fakeRunner whose hooks named "mod" in module b have
// a settings check rejecting replicas: 0.
type checkingRunner struct {
	*fakeRunner
	checks int
	broken bool
}

func (c *checkingRunner) HasSettingsCheck(_ context.Context, path string) (bool, error) {
	return strings.HasSuffix(path, filepath.Join("020-b", "hooks", "mod")), nil
}

func (c *checkingRunner) CachedSettingsCheck(string, values.Values) (hook.SettingsCheckResult, bool) {
	return hook.SettingsCheckResult{}, false
}

func (c *checkingRunner) CheckSettings(_ context.Context, _ string, settings values.Values) (hook.SettingsCheckResult, error) {
	c.checks++
	if c.broken {
		return hook.SettingsCheckResult{}, errors.New("exit code 2")
	}
	if r, ok := settings["replicas"].(float64); ok && r == 0 {
		return hook.SettingsCheckResult{Message: "replicas cannot be 0"}, nil
	}
	return hook.SettingsCheckResult{Valid: true, Warnings: []string{"fine"}}, nil
}

func TestSettingsCheckRefusesSectionAtAdmissionAndLoad(t *testing.T) {
	runner := &checkingRunner{fakeRunner: &fakeRunner{}}
	o, _ := newTestOperator(t, runner.fakeRunner)
	o.runner = runner

	if _, err := o.CheckConfigMap(map[string]string{"b": "replicas: 1\n", "a": "replicas: 0\n"}); err != nil {
		t.Fatalf("accepted settings refused: %v", err)
	}
	_, err := o.CheckConfigMap(map[string]string{"b": "replicas: 0\n"})
	if err == nil || !strings.Contains(err.Error(), "settings check: replicas cannot be 0") {
		t.Fatalf("CheckConfigMap: %v, want the check's message", err)
	}

	good := &config.Config{Modules: map[string]values.Values{"b": {"replicas": float64(3)}}}
	if !o.applyConfig(good) {
		t.Fatal("good configuration not applied")
	}
	bad := &config.Config{Modules: map[string]values.Values{"b": {"replicas": float64(0)}}}
	if o.applyConfig(bad) {
		t.Fatal("configuration the check refuses applied")
	}
	if got := o.store.Config().Modules["b"]["replicas"]; got != float64(3) {
		t.Errorf("replicas in force %v, want the last good 3", got)
	}
	if err := o.cfgHealth.Err(); err == nil || !strings.Contains(err.Error(), "replicas cannot be 0") {
		t.Errorf("configuration health %v, want the check's message", err)
	}

	// A section is not checked without one, and a check that cannot run
	// refuses what it could not see.
	before := runner.checks
	if _, err := o.CheckConfigMap(map[string]string{"a": "x: 1\n"}); err != nil || runner.checks != before {
		t.Errorf("no section for b: %v, %d checks", err, runner.checks-before)
	}
	runner.broken = true
	if _, err := o.CheckConfigMap(map[string]string{"b": "replicas: 1\n"}); err == nil || !strings.Contains(err.Error(), "settings check failed to run: exit code 2") {
		t.Errorf("broken check: %v", err)
	}
}

// blockingChecker's checks of module b run until released, counting how
// many run at once.
type blockingChecker struct {
	*checkingRunner
	release chan struct{}
	mu      sync.Mutex
	running int
	most    int
	started chan struct{}
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
	checker := &blockingChecker{
		checkingRunner: &checkingRunner{fakeRunner: &fakeRunner{}},
		release:        make(chan struct{}), started: make(chan struct{}, 16),
	}
	o, _ := newTestOperator(t, checker.fakeRunner)
	o.runner = checker
	o.admissionChecks.time = 300 * time.Millisecond

	// Fill the slots with checks that run until released.
	held := o.admissionChecks.time
	o.admissionChecks.time = time.Minute
	results := make(chan error, admissionCheckSlots)
	for i := range admissionCheckSlots {
		go func() {
			_, err := o.CheckConfigMap(map[string]string{"b": fmt.Sprintf("replicas: %d\n", i+1)})
			results <- err
		}()
		<-checker.started
	}
	o.admissionChecks.time = held

	_, err := o.CheckConfigMap(map[string]string{"b": "replicas: 9\n"})
	if err == nil || !strings.Contains(err.Error(), "every admission check slot stayed busy") {
		t.Fatalf("admission request with every slot taken: %v, want refused as busy", err)
	}

	// The operator's own check runs beside the held slots.
	done := make(chan bool)
	go func() {
		done <- o.applyConfig(&config.Config{Modules: map[string]values.Values{"b": {"replicas": float64(4)}}})
	}()
	<-checker.started
	close(checker.release)
	if !<-done {
		t.Fatal("configuration applied by the operator refused while admission slots were taken")
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
