package helm

import (
	"strings"
	"testing"
)

// globalsChart is a chart as public charts are written: its templates read
// global: settings that only its own values.yaml defaults (ingress-nginx's
// global.image.registry, cert-manager's global.rbac.create), and so does
// its subchart, from a global: default of its own.
func globalsChart(t *testing.T) string {
	t.Helper()
	return writeFiles(t, map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: public\nversion: 1.2.3\n",
		"values.yaml": `global:
  image:
    registry: registry.k8s.io
    tag: v1
  rbac:
    create: true
certManager:
  fromChart: resurrected
replicas: 2
`,
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: top
data:
  image: "{{ .Values.global.image.registry }}/controller:{{ .Values.global.image.tag }}"
  replicas: "{{ .Values.replicas }}"
  modules: "{{ join "," .Values.global.enabledModules }}"
  fromChart: "{{ .Values.certManager.fromChart | default "absent" }}"
{{- if .Values.global.rbac.create }}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: rbac
{{- end }}
`,
		"charts/sub/Chart.yaml":  "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
		"charts/sub/values.yaml": "global:\n  sub:\n    port: 8080\n",
		"charts/sub/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: sub
data:
  port: "{{ .Values.global.sub.port }}"
  registry: "{{ .Values.global.image.registry }}"
  tag: "{{ .Values.global.image.tag }}"
`,
	})
}

// operatorValues are the values the operator gives a module certManager:
// its globals (enabledModules and one chart setting) and its section.
func operatorValues() map[string]any {
	return map[string]any{
		"global": map[string]any{
			"enabledModules": []any{"cert-manager"},
			"image":          map[string]any{"tag": "v2"},
		},
		"certManager": map[string]any{"replicas": 3},
	}
}

func TestRenderMergesChartGlobalDefaultsUnderOperatorGlobals(t *testing.T) {
	r, err := RenderOffline(t.Context(), "ns", Release{Name: "cert-manager", ChartDir: globalsChart(t), Values: operatorValues()})
	if err != nil {
		t.Fatalf("RenderOffline: %v", err)
	}
	for _, want := range []string{
		`image: "registry.k8s.io/controller:v2"`, // chart default registry, operator's tag
		`replicas: "2"`,                          // the chart's own setting
		`modules: "cert-manager"`,                // the operator's globals reach the chart
		`fromChart: "absent"`,                    // the module section is the operator's alone
		"kind: ServiceAccount",                   // global.rbac.create defaulted by the chart
		`port: "8080"`,                           // the subchart's own global default
		`registry: "registry.k8s.io"`,            // the parent chart's global default, in the subchart
		`tag: "v2"`,                              // the operator's global, in the subchart
	} {
		if !strings.Contains(r.Manifest, want) {
			t.Errorf("manifest lacks %q:\n%s", want, r.Manifest)
		}
	}
}

func TestRenderOperatorGlobalOverridesAndDeletesChartDefault(t *testing.T) {
	vals := operatorValues()
	global := vals["global"].(map[string]any)
	global["rbac"] = map[string]any{"create": false}
	r, err := RenderOffline(t.Context(), "ns", Release{Name: "cert-manager", ChartDir: globalsChart(t), Values: vals})
	if err != nil {
		t.Fatalf("RenderOffline: %v", err)
	}
	if strings.Contains(r.Manifest, "kind: ServiceAccount") {
		t.Errorf("global.rbac.create: false of the operator did not override the chart's true:\n%s", r.Manifest)
	}
}

// strictChart has a values.schema.json that allows no key it does not
// declare, at the top and in global:, as cert-manager's does; its
// subchart's schema is as strict and declares no global.
func strictChart(t *testing.T, schema string) string {
	t.Helper()
	return writeFiles(t, map[string]string{
		"Chart.yaml":         "apiVersion: v2\nname: strict\nversion: 1.0.0\n",
		"values.yaml":        "replicas: 1\nglobal:\n  image:\n    registry: registry.k8s.io\n",
		"values.schema.json": schema,
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: strict
data:
  replicas: "{{ .Values.replicas }}"
  registry: "{{ .Values.global.image.registry }}"
  modules: "{{ join "," .Values.global.enabledModules }}"
  module: "{{ .Values.certManager.replicas }}"
`,
		"charts/sub/Chart.yaml":  "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
		"charts/sub/values.yaml": "port: 80\n",
		"charts/sub/values.schema.json": `{"type": "object", "additionalProperties": false,
  "properties": {"port": {"type": "integer"}}}`,
		"charts/sub/templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: sub\ndata:\n  port: \"{{ .Values.port }}\"\n",
	})
}

const strictSchema = `{"type": "object", "additionalProperties": false,
  "properties": {
    "replicas": {"type": "integer", "minimum": 1},
    "sub": {"type": "object"},
    "global": {"type": "object", "additionalProperties": false,
      "properties": {"image": {"type": "object", "additionalProperties": false,
        "properties": {"registry": {"type": "string"}}}}}}}`

func TestRenderStrictSchemaSeesTheChartsValuesOnly(t *testing.T) {
	r, err := RenderOffline(t.Context(), "ns", Release{Name: "cert-manager", ChartDir: strictChart(t, strictSchema), Values: map[string]any{
		"global":      map[string]any{"enabledModules": []any{"cert-manager"}, "image": map[string]any{"registry": "mirror.example"}},
		"certManager": map[string]any{"replicas": 3},
	}})
	if err != nil {
		t.Fatalf("RenderOffline: %v", err)
	}
	// The chart still receives everything, the operator's keys included.
	for _, want := range []string{`registry: "mirror.example"`, `modules: "cert-manager"`, `module: "3"`, `replicas: "1"`, `port: "80"`} {
		if !strings.Contains(r.Manifest, want) {
			t.Errorf("manifest lacks %q:\n%s", want, r.Manifest)
		}
	}
}

func TestRenderStrictSchemaChecksWhatTheChartDeclares(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		values map[string]any
		want   string // in the error
	}{
		{
			name:   "an operator global the schema declares, of the wrong type",
			schema: strictSchema,
			values: map[string]any{"global": map[string]any{"image": map[string]any{"registry": 5}}, "certManager": map[string]any{}},
			want:   "/global/image/registry",
		},
		{
			name: "the module section, when the schema declares it",
			schema: `{"type": "object", "properties": {"certManager": {"type": "object", "additionalProperties": false,
  "properties": {"replicas": {"type": "integer"}}}}}`,
			values: map[string]any{"global": map[string]any{}, "certManager": map[string]any{"replicas": 3, "typo": true}},
			want:   "typo",
		},
		{
			name:   "the chart's own default against its schema",
			schema: `{"type": "object", "properties": {"replicas": {"type": "integer", "minimum": 5}}}`,
			values: map[string]any{"global": map[string]any{}, "certManager": map[string]any{}},
			want:   "/replicas",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := RenderOffline(t.Context(), "ns", Release{Name: "cert-manager", ChartDir: strictChart(t, tt.schema), Values: tt.values})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "schema") {
				t.Errorf("RenderOffline error = %v, want a schema error naming %q", err, tt.want)
			}
		})
	}
}

func TestApplySkipsValuesChangeThatRendersTheSame(t *testing.T) {
	for _, tt := range []struct {
		name          string
		onValues      bool
		wantRevision  int
		wantSkipped   bool
		wantReasonSet bool
	}{
		{name: "default: the same manifests skip", wantRevision: 1, wantSkipped: true},
		{name: "upgradeOnValuesChange: always upgrades", onValues: true, wantRevision: 2, wantReasonSet: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			env := newTestEnv(t)
			dir := echoChart(t, "static")
			r := echoRelease(dir, "hello")
			r.UpgradeOnValuesChange = tt.onValues
			if _, err := env.client.Apply(t.Context(), r); err != nil {
				t.Fatalf("install: %v", err)
			}
			// A global the chart does not read changes.
			r.Values["global"] = map[string]any{"enabledModules": []any{"echo", "other"}}
			out, err := env.client.Apply(t.Context(), r)
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			if out.Revision != tt.wantRevision || out.Skipped != tt.wantSkipped || (out.Reason == ReasonChecksumChanged) != tt.wantReasonSet {
				t.Errorf("outcome = %+v, want revision %d, skipped %t", out, tt.wantRevision, tt.wantSkipped)
			}
			// Unchanged values skip either way.
			again, err := env.client.Apply(t.Context(), r)
			if err != nil || !again.Skipped {
				t.Errorf("apply with the same values = %+v, %v, want skipped", again, err)
			}
		})
	}
}
