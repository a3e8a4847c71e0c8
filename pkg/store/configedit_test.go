package store

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/values"
)

func TestPatchConfig(t *testing.T) {
	current := values.Values{"global": map[string]any{"a": 1.0}, "mod": map[string]any{"x": "y"}}
	yes := true
	tests := []struct {
		name    string
		patch   values.Patch
		policy  values.RootPolicy
		want    config.Edit
		wantErr string
	}{
		{
			name:   "global section and a dynamic enabled flag",
			patch:  values.Patch{{Op: "add", Path: "/global/b", Value: 2.0}, {Op: "add", Path: "/modEnabled", Value: true}},
			policy: values.GlobalHookRoots(),
			want: config.Edit{
				Sections: map[string]values.Values{"global": {"a": 1.0, "b": 2.0}},
				Enabled:  map[string]*bool{"mod": &yes},
			},
		},
		{
			name:   "module section removed",
			patch:  values.Patch{{Op: "remove", Path: "/mod"}},
			policy: values.ModuleHookRoots("mod"),
			want:   config.Edit{Sections: map[string]values.Values{"mod": nil}, Enabled: map[string]*bool{}},
		},
		{
			name:    "module hook may not touch global",
			patch:   values.Patch{{Op: "add", Path: "/global/b", Value: 2.0}},
			policy:  values.ModuleHookRoots("mod"),
			wantErr: "patch root not allowed",
		},
		{
			name:    "enabled flag must be a boolean",
			patch:   values.Patch{{Op: "add", Path: "/modEnabled", Value: "yes"}},
			policy:  values.GlobalHookRoots(),
			wantErr: "/modEnabled must be true or false",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := patchConfig(tt.patch, current, tt.policy)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("edit (-want +got):\n%s", diff)
			}
		})
	}
}
