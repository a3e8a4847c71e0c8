package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

type diffCase struct {
	name string
	prev map[string]string // nil: an absent ConfigMap
	next map[string]string
	want Change
}

// baseData is a ConfigMap with every kind of key.
func baseData() map[string]string {
	return map[string]string{
		"global":             "ha: true",
		"certManager":        "issuer: le",
		"certManagerEnabled": "true",
		"prometheus":         "retention: 7d",
	}
}

func TestDiffGlobal(t *testing.T) {
	base := baseData()
	runDiffCases(t, []diffCase{
		{name: "identical", prev: base, next: base, want: Change{}},
		{
			name: "same values written differently",
			prev: map[string]string{"global": "a: 1\nb: [1, 2]"},
			next: map[string]string{"global": "b:\n- 1\n- 2\na: 1.0\n"},
			want: Change{},
		},
		{name: "changed", prev: base, next: with(base, "global", "ha: false"), want: Change{GlobalChanged: true}},
		{name: "emptied", prev: base, next: with(base, "global", ""), want: Change{GlobalChanged: true}},
		{name: "removed", prev: base, next: without(base, "global"), want: Change{GlobalChanged: true}},
		{name: "added", prev: without(base, "global"), next: base, want: Change{GlobalChanged: true}},
	})
}

func TestDiffModules(t *testing.T) {
	base := baseData()
	runDiffCases(t, []diffCase{
		{
			name: "section changed", prev: base, next: with(base, "prometheus", "retention: 30d"),
			want: Change{ModulesChanged: []string{"prometheus"}},
		},
		{
			name: "section added", prev: base, next: with(base, "ingressNginx", "replicas: 2"),
			want: Change{ModulesChanged: []string{"ingressNginx"}},
		},
		{
			name: "section removed", prev: base, next: without(base, "prometheus"),
			want: Change{ModulesChanged: []string{"prometheus"}},
		},
		{
			name: "empty section added counts as no change", prev: base, next: with(base, "ingressNginx", "{}"),
			want: Change{},
		},
		{
			name: "section and enabled of one module changed together",
			prev: base, next: with(with(base, "certManager", "issuer: self"), "certManagerEnabled", "false"),
			want: Change{ModulesChanged: []string{"certManager"}, EnabledChanged: []string{"certManager"}},
		},
	})
}

func TestDiffMaintenance(t *testing.T) {
	base := baseData()
	runDiffCases(t, []diffCase{
		{
			name: "entered", prev: base, next: with(base, "certManagerMaintenance", "NoResourceReconciliation"),
			want: Change{MaintenanceChanged: []string{"certManager"}},
		},
		{
			name: "left by emptying the key", prev: with(base, "certManagerMaintenance", "NoResourceReconciliation"),
			next: with(base, "certManagerMaintenance", ""), want: Change{MaintenanceChanged: []string{"certManager"}},
		},
		{
			name: "spelled otherwise", prev: with(base, "certManagerMaintenance", "NoResourceReconciliation"),
			next: with(base, "certManagerMaintenance", "noresourcereconciliation"), want: Change{},
		},
	})
}

func TestDiffEnabled(t *testing.T) {
	base := baseData()
	runDiffCases(t, []diffCase{
		{
			name: "flipped on a module whose section did not change",
			prev: base, next: with(base, "certManagerEnabled", "false"),
			want: Change{EnabledChanged: []string{"certManager"}},
		},
		{
			name: "added on a module whose section exists",
			prev: base, next: with(base, "prometheusEnabled", "false"),
			want: Change{EnabledChanged: []string{"prometheus"}},
		},
		{
			name: "removed on a module whose section exists",
			prev: base, next: without(base, "certManagerEnabled"),
			want: Change{EnabledChanged: []string{"certManager"}},
		},
		{
			name: "added for a module without a section",
			prev: base, next: with(base, "ingressNginxEnabled", "true"),
			want: Change{EnabledChanged: []string{"ingressNginx"}},
		},
		{
			name: "same flag written with whitespace",
			prev: base, next: with(base, "certManagerEnabled", "true\n"),
			want: Change{},
		},
	})
}

func TestDiffWholeConfigMap(t *testing.T) {
	base := baseData()
	all := Change{
		GlobalChanged:  true,
		ModulesChanged: []string{"certManager", "prometheus"},
		EnabledChanged: []string{"certManager"},
	}
	runDiffCases(t, []diffCase{
		{
			name: "everything changed, lists sorted",
			prev: base,
			next: map[string]string{
				"global":             "ha: false",
				"zeta":               "a: 1",
				"certManager":        "issuer: self",
				"alphaEnabled":       "true",
				"certManagerEnabled": "false",
			},
			want: Change{
				GlobalChanged:  true,
				ModulesChanged: []string{"certManager", "prometheus", "zeta"},
				EnabledChanged: []string{"alpha", "certManager"},
			},
		},
		{name: "configmap created", prev: nil, next: base, want: all},
		{name: "configmap deleted", prev: base, next: nil, want: all},
	})
}

func runDiffCases(t *testing.T, tests []diffCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Diff(mustParse(t, tt.prev), mustParse(t, tt.next))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Diff() mismatch (-want +got):\n%s", diff)
			}
			if got.Empty() != cmp.Equal(tt.want, Change{}) {
				t.Errorf("Change.Empty() = %v for %+v", got.Empty(), got)
			}
		})
	}
}

func TestDiffNilConfigIsEmpty(t *testing.T) {
	empty := mustParse(t, nil)
	full := mustParse(t, map[string]string{"global": "a: 1", "foo": "b: 2", "fooEnabled": "true"})
	if diff := cmp.Diff(Diff(empty, full), Diff(nil, full)); diff != "" {
		t.Errorf("Diff(nil, c) differs from Diff(empty, c) (-empty +nil):\n%s", diff)
	}
	if diff := cmp.Diff(Diff(full, empty), Diff(full, nil)); diff != "" {
		t.Errorf("Diff(c, nil) differs from Diff(c, empty) (-empty +nil):\n%s", diff)
	}
	if got := Diff(nil, nil); !got.Empty() {
		t.Errorf("Diff(nil, nil) = %+v, want no change", got)
	}
}

func mustParse(t *testing.T, data map[string]string) *Config {
	t.Helper()
	c, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse(%v): %v", data, err)
	}
	return c
}

// with returns a copy of data with key set to val.
func with(data map[string]string, key, val string) map[string]string {
	out := map[string]string{key: val}
	for k, v := range data {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// without returns a copy of data without key.
func without(data map[string]string, key string) map[string]string {
	out := map[string]string{}
	for k, v := range data {
		if k != key {
			out[k] = v
		}
	}
	return out
}
