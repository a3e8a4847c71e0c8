package hook

import (
	"slices"
	"testing"

	"github.com/addon-operator/addon-operator/pkg/hook/batch"
	"github.com/addon-operator/addon-operator/pkg/values"
)

func TestHasBatchSettingsCheck(t *testing.T) {
	t.Parallel()
	for data, want := range map[string]bool{
		`{"version":"v1","hooks":[],"has_settings_check":true}`: true,
		`{"version":"v1","hooks":[{}]}`:                         false,
		`[{"configVersion":"v1"}]`:                              false,
		`not json`:                                              false,
	} {
		if got := batch.HasSettingsCheck([]byte(data)); got != want {
			t.Errorf("%s: %v, want %v", data, got, want)
		}
	}
}

func TestCheckSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := buildBatchHook(t, dir)
	e := &Executor{TempDir: t.TempDir()}
	has, err := e.HasSettingsCheck(t.Context(), bin)
	if err != nil || !has {
		t.Fatalf("HasSettingsCheck = %v, %v; want true", has, err)
	}
	script := writeScript(t, dir, "plain.sh", "echo '{\"configVersion\":\"v1\"}'\n")
	if has, err := e.HasSettingsCheck(t.Context(), script); err != nil || has {
		t.Fatalf("a script: HasSettingsCheck = %v, %v; want false", has, err)
	}
	for _, tt := range []struct {
		name     string
		settings values.Values
		want     SettingsCheckResult
	}{
		{"accepted", values.Values{"replicas": 1}, SettingsCheckResult{Valid: true}},
		{"no settings", nil, SettingsCheckResult{Valid: true}},
		{"rejected with the check's message", values.Values{"replicas": 0}, SettingsCheckResult{Message: "replicas cannot be 0"}},
		{"accepted with warnings", values.Values{"replicas": 2}, SettingsCheckResult{Valid: true, Warnings: []string{"two replicas are not highly available"}}},
		{"rejected again from memory", values.Values{"replicas": 0}, SettingsCheckResult{Message: "replicas cannot be 0"}},
	} {
		got, err := e.CheckSettings(t.Context(), bin, tt.settings)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got.Valid != tt.want.Valid || got.Message != tt.want.Message || !slices.Equal(got.Warnings, tt.want.Warnings) {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
	broken := writeScript(t, dir, "broken.sh", "echo oops >&2\nexit 1\n")
	if _, err := e.CheckSettings(t.Context(), broken, values.Values{}); err == nil {
		t.Error("a check answering no result: no error")
	}
}
