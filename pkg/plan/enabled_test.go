package plan

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/status"
)

func ptr(b bool) *bool { return &b }

func TestDecideEnabled(t *testing.T) {
	tests := []struct {
		name    string
		modules []enabledInput
		scripts map[string]bool // script result per module; absent = script not expected
		want    []Decision
		// wantSeen is what each script saw as enabled so far.
		wantSeen map[string][]string
	}{
		{
			name:    "nothing said: disabled by default",
			modules: []enabledInput{{Name: "a"}},
			want:    []Decision{{Name: "a", Enabled: false, By: status.SourceDefault}},
		},
		{
			name: "each later source overrides the earlier",
			modules: []enabledInput{
				{Name: "common", Common: ptr(true)},
				{Name: "own", Common: ptr(true), Own: ptr(false)},
				{Name: "dynamic", Own: ptr(false), Dynamic: ptr(true)},
				{Name: "configmap", Common: ptr(true), Dynamic: ptr(true), ConfigMap: ptr(false)},
				{Name: "configmap-on", Common: ptr(false), ConfigMap: ptr(true)},
			},
			want: []Decision{
				{Name: "common", Enabled: true, By: status.SourceStaticCommon},
				{Name: "own", Enabled: false, By: status.SourceStaticModule},
				{Name: "dynamic", Enabled: true, By: status.SourceDynamic},
				{Name: "configmap", Enabled: false, By: status.SourceConfigMap},
				{Name: "configmap-on", Enabled: true, By: status.SourceConfigMap},
			},
		},
		{
			name: "script may disable and sees the modules enabled before it",
			modules: []enabledInput{
				{Name: "a", Common: ptr(true)},
				{Name: "b", Common: ptr(true), HasScript: true},
				{Name: "c", Common: ptr(true), HasScript: true},
				{Name: "d", Common: ptr(true), HasScript: true},
			},
			scripts: map[string]bool{"b": false, "c": true, "d": true},
			want: []Decision{
				{Name: "a", Enabled: true, By: status.SourceStaticCommon},
				{Name: "b", Enabled: false, By: status.SourceEnabledScript},
				{Name: "c", Enabled: true, By: status.SourceStaticCommon},
				{Name: "d", Enabled: true, By: status.SourceStaticCommon},
			},
			wantSeen: map[string][]string{"b": {"a"}, "c": {"a"}, "d": {"a", "c"}},
		},
		{
			name:    "script cannot enable: not run for a disabled module",
			modules: []enabledInput{{Name: "a", ConfigMap: ptr(false), HasScript: true}},
			want:    []Decision{{Name: "a", Enabled: false, By: status.SourceConfigMap}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[string][]string{}
			got, err := decideEnabled(tt.modules, func(name string, soFar []string) (bool, error) {
				res, ok := tt.scripts[name]
				if !ok {
					t.Errorf("enabled script of %q ran, want not run", name)
				}
				seen[name] = soFar
				return res, nil
			})
			if err != nil {
				t.Fatalf("decideEnabled: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
			if tt.wantSeen == nil {
				tt.wantSeen = map[string][]string{}
			}
			if diff := cmp.Diff(tt.wantSeen, seen); diff != "" {
				t.Errorf("enabled modules seen by scripts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecideEnabledScriptError(t *testing.T) {
	_, err := decideEnabled([]enabledInput{{Name: "broken", Common: ptr(true), HasScript: true}},
		func(string, []string) (bool, error) { return false, errors.New(`wrote "maybe"`) })
	if err == nil || err.Error() != `module "broken": enabled script: wrote "maybe"` {
		t.Errorf("error = %v, want it to name the module and the script's output", err)
	}
}

func TestPlanConverge(t *testing.T) {
	decisions := []Decision{
		{Name: "a", Enabled: true},
		{Name: "b", Enabled: true},
		{Name: "c", Enabled: false},
		{Name: "d", Enabled: false},
		{Name: "e", Enabled: false},
	}
	tests := []struct {
		name       string
		wasEnabled map[string]bool
		owned      []string
		want       Plan
	}{
		{
			name:  "first converge: all enabled start up; a disabled module with a release is deleted; an orphan release is purged",
			owned: []string{"a", "d", "gone"},
			want: Plan{
				Decisions: decisions,
				Run:       []string{"a", "b"},
				Startup:   map[string]bool{"a": true, "b": true},
				Delete:    []string{"d"},
				Purge:     []string{"gone"},
			},
		},
		{
			name:  "adopted releases: one of a removed module is purged, one of an enabled module runs",
			owned: []string{"a", "gone"},
			want: Plan{
				Decisions: decisions,
				Run:       []string{"a", "b"},
				Startup:   map[string]bool{"a": true, "b": true},
				Purge:     []string{"gone"},
			},
		},
		{
			name:       "later converge: newly enabled start up, newly disabled are deleted in reverse order",
			wasEnabled: map[string]bool{"a": true, "c": true, "e": true},
			owned:      []string{"a", "c", "e"},
			want: Plan{
				Decisions: decisions,
				Run:       []string{"a", "b"},
				Startup:   map[string]bool{"b": true},
				Delete:    []string{"e", "c"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Converge(decisions, tt.wasEnabled, tt.owned)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}
