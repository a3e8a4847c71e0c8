package operator

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

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
	o, _ := newTestOperatorWith(t, runner.fakeRunner, func(d *Deps) { d.Hooks = runner })

	if _, err := o.checks.CheckConfigMap(map[string]string{"b": "replicas: 1\n", "a": "replicas: 0\n"}); err != nil {
		t.Fatalf("accepted settings refused: %v", err)
	}
	_, err := o.checks.CheckConfigMap(map[string]string{"b": "replicas: 0\n"})
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
	if err := o.cfg.Health().Err(); err == nil || !strings.Contains(err.Error(), "replicas cannot be 0") {
		t.Errorf("configuration health %v, want the check's message", err)
	}

	// A section is not checked without one, and a check that cannot run
	// refuses what it could not see.
	before := runner.checks
	if _, err := o.checks.CheckConfigMap(map[string]string{"a": "x: 1\n"}); err != nil || runner.checks != before {
		t.Errorf("no section for b: %v, %d checks", err, runner.checks-before)
	}
	runner.broken = true
	if _, err := o.checks.CheckConfigMap(map[string]string{"b": "replicas: 1\n"}); err == nil || !strings.Contains(err.Error(), "settings check failed to run: exit code 2") {
		t.Errorf("broken check: %v", err)
	}
}
