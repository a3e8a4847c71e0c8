package jq

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInputKeepsIntegersExact(t *testing.T) {
	in := map[string]any{
		"big":   int64(1) << 60,
		"small": int32(7),
		"ratio": float32(0.5),
		"list":  []any{int64(1), "a", nil},
	}
	code, err := Compile(`[.big, .small, .ratio, .list[0]]`)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := code.Run(Input(in)).Next()
	if !ok {
		t.Fatal("no result")
	}
	want := []any{1 << 60, 7, 0.5, 1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if _, isInt64 := in["big"].(int64); !isInt64 {
		t.Error("Input changed its argument")
	}
}

func TestCompileRejectsBrokenFilters(t *testing.T) {
	for _, filter := range []string{".a |", "undefined_fn(1)"} {
		if _, err := Compile(filter); err == nil {
			t.Errorf("Compile(%q) succeeded", filter)
		}
	}
}
