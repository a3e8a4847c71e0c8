package store

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/addon-operator/addon-operator/pkg/values"
)

func TestExplain(t *testing.T) {
	layers := []Layer{
		{Source: "modules/values.yaml", Values: values.Values{"a": map[string]any{"x": 1.0, "y": "static"}, "list": []any{1.0}}},
		{Source: "schema default", Values: values.Values{"a": map[string]any{"y": "static", "z": true}, "empty": map[string]any{}}},
		{Source: "ConfigMap key mod", Values: values.Values{"a": map[string]any{"x": 2.0}, "list": []any{3.0, 4.0}}},
	}
	want := []Leaf{
		{Path: "a.x", Value: 2.0, Source: "ConfigMap key mod"},
		// Set by two layers with the same value: the higher one is named.
		{Path: "a.y", Value: "static", Source: "schema default"},
		{Path: "a.z", Value: true, Source: "schema default"},
		{Path: "empty", Value: map[string]any{}, Source: "schema default"},
		{Path: "list", Value: []any{3.0, 4.0}, Source: "ConfigMap key mod"},
	}
	if diff := cmp.Diff(want, Explain(layers)); diff != "" {
		t.Errorf("explain (-want +got):\n%s", diff)
	}
}
