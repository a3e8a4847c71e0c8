package module

import (
	"strings"
	"testing"

	"github.com/addon-operator/addon-operator/pkg/values"
)

// TestValuesFilesYAML12 checks that values.yaml files, the module's own and
// the modules dir's, read plain scalars with YAML 1.2 core rules: only
// true/false (any case form) are booleans.
func TestValuesFilesYAML12(t *testing.T) {
	words := []struct {
		word string
		want any
	}{
		{"on", "on"}, {"off", "off"}, {"yes", "yes"}, {"no", "no"}, {"NO", "NO"},
		{"Yes", "Yes"}, {"y", "y"}, {"n", "n"}, {"Y", "Y"},
		{"true", true}, {"True", true}, {"TRUE", true}, {"false", false}, {"FALSE", false},
	}
	cases := make([]valuesCase, 0, len(words))
	for _, w := range words {
		section := values.Values{"mode": w.want, "list": []any{w.want}, "y": w.want}
		doc := "a: {mode: " + w.word + ", list: [" + w.word + "], y: " + w.word + "}\n"
		cases = append(cases, valuesCase{
			name: w.word,
			entries: map[string]node{
				"m1/values.yaml":   file(doc + "global: {mode: " + w.word + "}\n"),
				"m1/a/values.yaml": file(doc),
			},
			module: "a",
			want: staticView{
				Static:       section,
				Common:       section,
				GlobalStatic: values.Values{"mode": w.want},
			},
		})
	}
	runValuesCases(t, cases)
}

func TestValuesFileYAMLErrorNamesFileAndLine(t *testing.T) {
	_, _, _, err := discoverTree(t, map[string]node{
		"m1":               dir(),
		"m1/a/values.yaml": file("a:\n  mode: off\n  list: [on, off\n"),
	}, Options{ModulesDirs: []string{"m1"}})
	if err == nil {
		t.Fatal("Discover() error = nil, want a parse error")
	}
	for _, want := range []string{"m1/a/values.yaml", "line 3: did not find expected ',' or ']'"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Discover() error = %q, want it to contain %q", err, want)
		}
	}
}
