package module

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// deckhouseDefinition carries every field of Deckhouse's module.yaml, and
// one that no one knows.
const deckhouseDefinition = `name: cni-demo
weight: 30
critical: true
namespace: d8-cni-demo
stage: General Availability
subsystems: [network]
tags: [cni, networking]
descriptions:
  en: Pod networking.
  ru: Сеть подов.
exclusiveGroup: cni
requirements:
  kubernetes: ">= 1.27"
  deckhouse: ">= 1.61"
  bootstrapped: true
  modules:
    base: ">= 1.0"
disable:
  confirmation: true
  messages:
    en: Pods lose their network.
accessibility:
  editions:
    _default: {available: true}
update:
  versions: [{from: "1.1", to: "1.3"}]
colour: blue
`

func TestDiscoverDeckhouseDefinition(t *testing.T) {
	_, set, logs, err := discoverTree(t, map[string]node{
		"m/030-cni-demo/module.yaml": file(deckhouseDefinition),
		"m/base/module.yaml":         file("version: 1.2.0\n"),
		"m/other":                    dir(),
	}, Options{ModulesDirs: []string{"m"}, KubernetesVersion: "v1.31.2"})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := set.Module("cni-demo")
	if m.Err() != nil {
		t.Fatalf("cni-demo cannot run: %v", m.Err())
	}
	d := m.Definition()
	got := map[string]any{
		"order": m.Order(), "critical": m.Critical(), "group": m.ExclusiveGroup(), "namespace": m.Namespace(),
		"description": m.Description(), "stage": d.Stage, "tags": d.Tags, "subsystems": d.Subsystems,
		"requires": m.Requires(), "ru": d.Descriptions["ru"],
	}
	want := map[string]any{
		"order": 30, "critical": true, "group": "cni", "namespace": "d8-cni-demo",
		"description": "Pod networking.", "stage": "General Availability", "tags": []string{"cni", "networking"},
		"subsystems": []string{"network"}, "requires": []string{"base"}, "ru": "Сеть подов.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("definition (-want +got):\n%s", diff)
	}
	if need, msg := m.DisableConfirmation(); !need || msg != "Pods lose their network." {
		t.Errorf("DisableConfirmation = %v %q, want the English message", need, msg)
	}
	wantWarnings := []string{
		`module.yaml: unknown field "colour" ignored`,
		"module.yaml: accessibility ignored: edition availability is Deckhouse's",
		"module.yaml: update ignored: release update paths are Deckhouse's",
		"module.yaml: requirements.deckhouse ignored: there is no Deckhouse version to check",
		"module.yaml: requirements.bootstrapped ignored: cluster bootstrap is Deckhouse's",
	}
	if diff := cmp.Diff(wantWarnings, m.Warnings()); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	logged := 0
	for _, rec := range logs.records(t) {
		if rec["msg"] == "module definition" && rec["module"] == "cni-demo" {
			logged++
		}
	}
	if logged != len(wantWarnings) {
		t.Errorf("%d warnings logged, want each of the %d once", logged, len(wantWarnings))
	}
	other, _ := set.Module("other")
	if other.Waits(m) != WaitAttempt {
		t.Error("a module that is not critical does not wait for the critical one")
	}
	if m.Waits(other) != WaitNone {
		t.Error("the critical module waits for one that is not")
	}
}

// TestDiscoverBrokenModuleAlone: a module whose module.yaml cannot be read
// fails alone, named with its file and key; the others are discovered.
func TestDiscoverBrokenModuleAlone(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]node{
		"m/010-good/module.yaml":  file("namespace: good\n"),
		"m/020-bad/module.yaml":   file("namespace: bad\ntags: cni\n"),
		"m/020-bad/values.yaml":   file("badEnabled: true\n"),
		"m/030-later/values.yaml": file("later: {x: 1}\n"),
	})
	set, err := Discover(Options{ModulesDirs: []string{root + "/m"}})
	if err != nil {
		t.Fatalf("Discover = %v, want the broken module to fail alone", err)
	}
	names := make([]string, 0, 3)
	for _, m := range set.Modules() {
		names = append(names, m.Name())
	}
	if diff := cmp.Diff([]string{"good", "bad", "later"}, names); diff != "" {
		t.Errorf("modules (-want +got):\n%s", diff)
	}
	bad, _ := set.Module("bad")
	var de *DefinitionError
	if !errors.As(bad.Err(), &de) || de.Path != root+"/m/020-bad/module.yaml" || de.Field != "tags" {
		t.Fatalf("bad.Err() = %v, want a *DefinitionError for the file's tags", bad.Err())
	}
	if bad.Order() != 20 || bad.HasDefinition() {
		t.Errorf("a broken module keeps its name and order, without its module.yaml")
	}
	if e := bad.StaticEnabled(); e == nil || !*e {
		t.Errorf("a broken module.yaml loses the module's values.yaml: StaticEnabled = %v", e)
	}
	for _, name := range []string{"good", "later"} {
		if m, _ := set.Module(name); m.Err() != nil {
			t.Errorf("%s: %v", name, m.Err())
		}
	}
	if err := set.Err(); err == nil || !strings.HasPrefix(err.Error(), `module "bad": `) || strings.Contains(err.Error(), "good") {
		t.Errorf("set.Err() = %v, want only the broken module", err)
	}
}

func TestDiscoverRequirementsNotMet(t *testing.T) {
	entries := map[string]node{
		"m/new-kube/module.yaml":    file("requirements: {kubernetes: \">= 1.29\"}\n"),
		"m/wants-chart/module.yaml": file("requirements: {modules: {chart: \">= 2\"}}\n"),
		"m/chart/Chart.yaml":        file("name: chart\nversion: 1.5.0\n"),
		"m/missing/module.yaml":     file("requirements: {modules: {nowhere: \"\"}}\n"),
	}
	cases := []struct {
		kube string
		want map[string]string
	}{
		{kube: "v1.28.3", want: map[string]string{
			"new-kube":    `module.yaml requirements.kubernetes ">= 1.29": the cluster runs Kubernetes v1.28.3`,
			"wants-chart": `module.yaml requires "chart": version 1.5.0 of "chart" does not meet ">= 2"`,
			"missing":     `module.yaml requires "nowhere", which is no module`,
		}},
		{kube: "v1.29.0-rc.1+k3s1", want: map[string]string{
			"wants-chart": `version 1.5.0 of "chart" does not meet ">= 2"`,
			"missing":     `which is no module`,
		}},
		{kube: "", want: map[string]string{
			"wants-chart": `does not meet`,
			"missing":     `which is no module`,
		}},
	}
	for _, tc := range cases {
		t.Run("kube "+tc.kube, func(t *testing.T) {
			_, set, _, _ := discoverTree(t, entries, Options{ModulesDirs: []string{"m"}, KubernetesVersion: tc.kube})
			for _, m := range set.Modules() {
				want, blocked := tc.want[m.Name()]
				switch err := m.Err(); {
				case !blocked && err != nil:
					t.Errorf("%s: %v, want it to run", m.Name(), err)
				case blocked && (err == nil || !strings.Contains(err.Error(), want)):
					t.Errorf("%s: %v, want %q", m.Name(), err, want)
				}
			}
		})
	}
}

func TestCriticalRequiringLaterModuleIsNoCycle(t *testing.T) {
	_, set, _, err := discoverTree(t, map[string]node{
		"m/010-core/module.yaml":   file("critical: true\nrequirements: {modules: {helper: \"\"}}\n"),
		"m/020-helper/module.yaml": file("version: 1.0.0\n"),
	}, Options{ModulesDirs: []string{"m"}})
	if err != nil {
		t.Fatal(err)
	}
	core, _ := set.Module("core")
	helper, _ := set.Module("helper")
	if helper.Waits(core) != WaitNone || core.Waits(helper) != WaitReady {
		t.Errorf("waits: helper->core %v, core->helper %v", helper.Waits(core), core.Waits(helper))
	}
}

// TestDefinitionRBACFieldsAreKnown: the fields of rbac rules, promoted
// from Kubernetes' PolicyRule, are not warned about; one no rule has is.
func TestDefinitionRBACFieldsAreKnown(t *testing.T) {
	_, set, _, err := discoverTree(t, map[string]node{
		"m/a/module.yaml": file("rbac:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  resourceNames: [x]\n  verbs: [update]\n" +
			"  namespaces: [default]\n  scope: all\n"),
	}, Options{ModulesDirs: []string{"m"}})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := set.Module("a")
	if diff := cmp.Diff([]string{`module.yaml: unknown field "rbac[0].scope" ignored`}, m.Warnings()); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
