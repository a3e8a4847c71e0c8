package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/addon-operator/addon-operator/pkg/plan"
)

// TestPrintModulesDeckhouseColumns: module.yaml's Deckhouse fields, and
// why a module would not run, get columns when some module has them.
func TestPrintModulesDeckhouseColumns(t *testing.T) {
	var plain bytes.Buffer
	if err := printModules(&plain, []plan.ModuleInfo{{Name: "web", Order: 10}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "CRITICAL") {
		t.Errorf("columns without Deckhouse fields:\n%s", plain.String())
	}
	var out bytes.Buffer
	err := printModules(&out, []plan.ModuleInfo{
		{Name: "cni", Order: 10, Critical: true, Stage: "Preview", ExclusiveGroup: "cni", Subsystems: []string{"network"}, Tags: []string{"cni"},
			Warnings: []string{`module.yaml: unknown field "colour" ignored`}},
		{Name: "broken", Order: 20, Error: "/m/020-broken/module.yaml: field tags: want []string, got string"},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	for i, want := range [][]string{
		{"CRITICAL", "STAGE", "GROUP", "TAGS", "PROBLEM"},
		{"cni", "true", "Preview", "network,cni", `unknown field "colour" ignored`},
		{"broken", "false", "module.yaml: field tags"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d %q lacks %q", i, lines[i], w)
			}
		}
	}
}
