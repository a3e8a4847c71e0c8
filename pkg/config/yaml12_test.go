package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/values"
)

// TestParseYAML12 checks that ConfigMap sections read plain scalars with
// YAML 1.2 core rules: only true/false (any case form) are booleans, and a
// key y stays "y".
func TestParseYAML12(t *testing.T) {
	tests := []struct {
		word string
		want any
	}{
		{"on", "on"}, {"off", "off"}, {"On", "On"}, {"OFF", "OFF"},
		{"yes", "yes"}, {"no", "no"}, {"Yes", "Yes"}, {"NO", "NO"},
		{"y", "y"}, {"n", "n"}, {"Y", "Y"}, {"N", "N"},
		{"true", true}, {"True", true}, {"TRUE", true},
		{"false", false}, {"False", false}, {"FALSE", false},
	}
	for _, tt := range tests {
		t.Run(tt.word, func(t *testing.T) {
			section := "mode: " + tt.word + "\nlist: [" + tt.word + "]\n" + tt.word + ": key\n"
			got, err := Parse(map[string]string{"global": section, "certManager": section})
			if err != nil {
				t.Fatalf("Parse() error = %v", err)
			}
			want := values.Values{"mode": tt.want, "list": []any{tt.want}}
			// A key is its text whatever the word resolves to.
			want[tt.word] = "key"
			if diff := cmp.Diff(want, got.Global); diff != "" {
				t.Errorf("global mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, got.Modules["certManager"]); diff != "" {
				t.Errorf("certManager mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
