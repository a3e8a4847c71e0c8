package catalogue

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMaintenanceWindowsConversionHookOffline(t *testing.T) {
	t.Parallel()
	const group = "catalogue.addon-operator.io/"
	tests := []struct {
		name     string
		to       string
		objects  string
		wantSpec []map[string]any
	}{
		{
			name: "v1alpha1 to v1beta1", to: "v1beta1",
			objects:  `[{"apiVersion":"` + group + `v1alpha1","spec":{"schedule":"0 3 * * 6","duration":"1h30m"}},{"apiVersion":"` + group + `v1alpha1","spec":{"duration":"2h"}},{"apiVersion":"` + group + `v1alpha1","spec":{"duration":"45m"}}]`,
			wantSpec: []map[string]any{{"schedule": "0 3 * * 6", "durationMinutes": 90.0}, {"durationMinutes": 120.0}, {"durationMinutes": 45.0}},
		},
		{
			name: "v1beta1 to v1alpha1", to: "v1alpha1",
			objects:  `[{"apiVersion":"` + group + `v1beta1","spec":{"durationMinutes":90}},{"apiVersion":"` + group + `v1beta1","spec":{"durationMinutes":120}},{"apiVersion":"` + group + `v1beta1","spec":{"durationMinutes":45}}]`,
			wantSpec: []map[string]any{{"duration": "1h30m"}, {"duration": "2h"}, {"duration": "45m"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			contexts := `[{"binding":"maintenancewindows","type":"Conversion","toVersion":"` + group + tt.to + `","review":{"request":{"desiredAPIVersion":"` + group + tt.to + `","objects":` + tt.objects + `}}}]`
			out := runScript(t, "modules/040-maintenance-windows/hooks/convert", contexts, "{}")
			var resp struct {
				ConvertedObjects []struct {
					APIVersion string         `json:"apiVersion"`
					Spec       map[string]any `json:"spec"`
				} `json:"convertedObjects"`
			}
			if err := json.Unmarshal([]byte(out["CONVERSION_RESPONSE_PATH"]), &resp); err != nil {
				t.Fatalf("response %q: %v", out["CONVERSION_RESPONSE_PATH"], err)
			}
			got := make([]map[string]any, 0, len(resp.ConvertedObjects))
			for _, o := range resp.ConvertedObjects {
				if o.APIVersion != group+tt.to {
					t.Errorf("apiVersion %s, want %s", o.APIVersion, group+tt.to)
				}
				got = append(got, o.Spec)
			}
			if diff := cmp.Diff(tt.wantSpec, got); diff != "" {
				t.Errorf("converted specs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMaintenanceWindowsValidatingHookOffline(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, object, want string }{
		{"two hours", `{"metadata":{"name":"w"},"spec":{"duration":"2h"}}`, `{"allowed":true}`},
		{"a day exactly", `{"metadata":{"name":"w"},"spec":{"duration":"24h"}}`, `{"allowed":true}`},
		{"longer than a day", `{"metadata":{"name":"w"},"spec":{"duration":"30h"}}`, `{"allowed":false,"message":"maintenance window w: 1800 minutes is longer than a day"}`},
		{"v1beta1 minutes", `{"metadata":{"name":"m"},"spec":{"durationMinutes":2000}}`, `{"allowed":false,"message":"maintenance window m: 2000 minutes is longer than a day"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			contexts := `[{"binding":"duration.maintenancewindows.catalogue.addon-operator.io","type":"Validating","review":{"request":{"object":` + tt.object + `}}}]`
			out := runScript(t, "modules/040-maintenance-windows/hooks/validate", contexts, "{}")
			var got, want any
			if err := json.Unmarshal([]byte(out["VALIDATING_RESPONSE_PATH"]), &got); err != nil {
				t.Fatalf("response %q: %v", out["VALIDATING_RESPONSE_PATH"], err)
			}
			_ = json.Unmarshal([]byte(tt.want), &want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}
