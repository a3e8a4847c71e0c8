package module

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDiscoverDefinition(t *testing.T) {
	_, set, _, err := discoverTree(t, map[string]node{
		"m/010-cert-manager/module.yaml": file("name: cert-manager\nnamespace: cert-manager\nversion: 1.4.0\ndescription: certificates\n" +
			"readinessTimeout: 90s\nremediation: {strategy: rollback, retries: 2}\n" +
			"disable: {confirmation: true, message: \"issued certificates stop renewing\"}\n"),
		"m/ingress/module.yaml": file("weight: 20\nnamespace: ingress\nrequires:\n  cert-manager: \">= 1.2\"\n"),
		"m/030-legacy":          dir(),
		"m/empty/module.yaml":   file("\n"),
	}, Options{ModulesDirs: []string{"m"}, UnnumberedOrder: DefaultUnnumberedOrder})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Name, Namespace string
		Order           int
		HasDef          bool
		Requires        []string
	}
	got := make([]row, 0, len(set.Modules()))
	for _, m := range set.Modules() {
		got = append(got, row{m.Name(), m.Namespace(), m.Order(), m.HasDefinition(), m.Requires()})
	}
	want := []row{
		{Name: "empty", Order: 1, HasDef: true},
		{Name: "cert-manager", Namespace: "cert-manager", Order: 10, HasDef: true},
		{Name: "ingress", Namespace: "ingress", Order: 20, HasDef: true, Requires: []string{"cert-manager"}},
		{Name: "legacy", Order: 30},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modules (-want +got):\n%s", diff)
	}
	cm, _ := set.Module("cert-manager")
	if d := cm.Definition(); d.Version != "1.4.0" || d.Description != "certificates" || d.ReadinessTimeout.Duration != 90*time.Second {
		t.Errorf("cert-manager definition = %+v", d)
	}
	if got, want := cm.Remediation(), (Remediation{Strategy: "rollback", Retries: 2}); got != want {
		t.Errorf("cert-manager remediation = %+v, want %+v", got, want)
	}
	if need, msg := cm.DisableConfirmation(); !need || msg != "issued certificates stop renewing" {
		t.Errorf("cert-manager disable confirmation = %v %q, want true with its message", need, msg)
	}
	legacy, _ := set.Module("legacy")
	ingress, _ := set.Module("ingress")
	if need, _ := ingress.DisableConfirmation(); need {
		t.Error("ingress needs a confirmation to be disabled without a disable section")
	}
	if got := ingress.Remediation(); got != (Remediation{}) {
		t.Errorf("ingress remediation = %+v, want the operator's defaults", got)
	}
	waits := map[string]Wait{
		"ingress->cert-manager": ingress.Waits(cm),
		"cert-manager->ingress": cm.Waits(ingress),
		"legacy->ingress":       legacy.Waits(ingress),
		"legacy->cert-manager":  legacy.Waits(cm),
		"ingress->legacy":       ingress.Waits(legacy),
	}
	wantWaits := map[string]Wait{
		"ingress->cert-manager": WaitReady, "cert-manager->ingress": WaitNone,
		"legacy->ingress": WaitAttempt, "legacy->cert-manager": WaitAttempt, "ingress->legacy": WaitNone,
	}
	if diff := cmp.Diff(wantWaits, waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}

func TestDiscoverDefinitionErrors(t *testing.T) {
	runErrorCases(t, []errorCase{
		{
			name:    "wrong type",
			entries: map[string]node{"m/a/module.yaml": file("weight: ten\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`module "a": $ROOT/m/a/module.yaml: field weight: want int, got string`},
		},
		{
			name:    "wrong type below the top",
			entries: map[string]node{"m/a/module.yaml": file("requirements: {kubernetes: [1]}\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`$ROOT/m/a/module.yaml: field requirements.kubernetes: want string, got array`},
		},
		{
			name:    "bad YAML",
			entries: map[string]node{"m/a/module.yaml": file("weight: [\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`module "a": $ROOT/m/a/module.yaml: yaml: line 1`},
		},
		{
			name:    "not a map",
			entries: map[string]node{"m/a/module.yaml": file("- a\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`$ROOT/m/a/module.yaml: top level is a list, want a map`},
		},
		{
			name:    "duplicate key",
			entries: map[string]node{"m/a/module.yaml": file("weight: 1\nweight: 2\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`$ROOT/m/a/module.yaml: `, `"weight" already set`},
		},
		{
			name:    "exclusive group that is no label value",
			entries: map[string]node{"m/a/module.yaml": file("exclusiveGroup: \"two words\"\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`$ROOT/m/a/module.yaml: field exclusiveGroup: "two words"`},
		},
		{
			name:    "invalid kubernetes constraint",
			entries: map[string]node{"m/a/module.yaml": file("requirements: {kubernetes: \"newer\"}\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`$ROOT/m/a/module.yaml: field requirements.kubernetes: version constraint "newer"`},
		},
		{
			name:    "requires and requirements.modules disagree",
			entries: map[string]node{"m/a/module.yaml": file("requires: {b: \">= 1\"}\nrequirements: {modules: {b: \">= 2\"}}\n"), "m/b": dir()},
			dirs:    []string{"m"},
			wantIn:  []string{`$ROOT/m/a/module.yaml: field requirements.modules.b: ">= 2", but requires says ">= 1"`},
		},
		{
			name:    "unknown remediation strategy",
			entries: map[string]node{"m/a/module.yaml": file("remediation: {strategy: rollforward}\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`$ROOT/m/a/module.yaml: field remediation.strategy: "rollforward": want none, rollback or uninstall`},
		},
		{
			name:    "disable message too long",
			entries: map[string]node{"m/a/module.yaml": file("disable: {confirmation: true, message: " + strings.Repeat("x", 1025) + "}\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`$ROOT/m/a/module.yaml: field disable.message: 1025 bytes, at most 1024`},
		},
		{
			name:    "prefix and weight disagree",
			entries: map[string]node{"m/010-a/module.yaml": file("weight: 20\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`module "a": directory prefix 10 and module.yaml weight 20 disagree`},
		},
		{
			name:    "name is not the directory's",
			entries: map[string]node{"m/a/module.yaml": file("name: b\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`$ROOT/m/a/module.yaml: field name: "b" is not the module's name "a"`},
		},
		{
			name:    "invalid namespace",
			entries: map[string]node{"m/a/module.yaml": file("namespace: Not_OK\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`$ROOT/m/a/module.yaml: field namespace: "Not_OK"`},
		},
	})
}

// TestDiscoverRequirementErrors: what modules wait for is checked for
// bad constraints, missing modules, versions and cycles.
func TestDiscoverRequirementErrors(t *testing.T) {
	runErrorCases(t, []errorCase{
		{
			name:    "invalid constraint",
			entries: map[string]node{"m/a/module.yaml": file("requires: {b: \"bigger than 1\"}\n"), "m/b": dir()},
			dirs:    []string{"m"},
			wantIn:  []string{`$ROOT/m/a/module.yaml: field requires.b: version constraint "bigger than 1"`},
		},
		{
			name:    "a module that does not exist",
			entries: map[string]node{"m/a/module.yaml": file("requires: {b: \"\"}\n")},
			dirs:    []string{"m"},
			wantIn:  []string{`module "a": module.yaml requires "b", which is no module`},
		},
		{
			name: "a version that does not meet the constraint",
			entries: map[string]node{
				"m/a/module.yaml": file("requires: {b: \">= 2\"}\n"),
				"m/b/module.yaml": file("version: 1.9.0\n"),
			},
			dirs:   []string{"m"},
			wantIn: []string{`module "a": module.yaml requires "b": version 1.9.0 of "b" does not meet ">= 2"`},
		},
		{
			name: "a cycle is named",
			entries: map[string]node{
				"m/a/module.yaml": file("requires: {b: \"\"}\n"),
				"m/b/module.yaml": file("requires: {c: \"\"}\n"),
				"m/c/module.yaml": file("requires: {a: \"\"}\n"),
			},
			dirs:   []string{"m"},
			wantIn: []string{"modules wait for each other: a -> b -> c -> a"},
		},
		{
			name: "a cycle through a module without module.yaml",
			entries: map[string]node{
				"m/010-a/module.yaml": file("requires: {b: \"\"}\n"),
				"m/020-b":             dir(),
			},
			dirs:   []string{"m"},
			wantIn: []string{"modules wait for each other: a -> b -> a (b without module.yaml wait for every module of a lower order"},
		},
	})
}
