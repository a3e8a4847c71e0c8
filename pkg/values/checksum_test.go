package values

import (
	"math"
	"testing"
)

func TestChecksum(t *testing.T) {
	tests := []struct {
		name     string
		a, b     any
		wantSame bool
	}{
		{name: "key order does not matter", a: mustJSON(t, `{"a":1,"b":{"x":1,"y":2}}`), b: mustJSON(t, `{"b":{"y":2,"x":1},"a":1}`), wantSame: true},
		{name: "int and float64 agree", a: Values{"n": 1}, b: Values{"n": 1.0}, wantSame: true},
		{name: "nested Values and maps agree", a: Values{"m": Values{"a": "x"}}, b: Values{"m": map[string]any{"a": "x"}}, wantSame: true},
		{name: "nil and empty Values agree", a: Values(nil), b: Values{}, wantSame: true},
		{name: "values differ", a: Values{"a": 1}, b: Values{"a": 2}},
		{name: "slice order matters", a: Values{"l": []any{1, 2}}, b: Values{"l": []any{2, 1}}},
		{name: "null differs from missing", a: Values{"a": nil}, b: Values{}},
		{name: "string differs from number", a: Values{"a": "1"}, b: Values{"a": 1}},
		{name: "unencodable is stable", a: Values{"a": math.NaN()}, b: Values{"a": math.NaN()}, wantSame: true},
		{name: "unencodable differs from encodable", a: Values{"a": math.Inf(1)}, b: Values{"a": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := Checksum(tt.a), Checksum(tt.b)
			if len(a) != 64 {
				t.Fatalf("Checksum() = %q, want 64 hex digits", a)
			}
			if (a == b) != tt.wantSame {
				t.Errorf("Checksum(a) = %s, Checksum(b) = %s, want same = %v", a, b, tt.wantSame)
			}
		})
	}
}

func TestChecksumPinned(t *testing.T) {
	// sha256 of `{"a":[1,"x"],"b":{"c":true}}`; pins the canonical encoding.
	const want = "7bc1d4c77305c3b7a6c9baf4eb98ea1a5c613dfad39c54d270608be4f47c693d"
	got := Checksum(mustJSON(t, `{"b":{"c":true},"a":[1,"x"]}`))
	if got != want {
		t.Errorf("Checksum() = %s, want %s", got, want)
	}
}

func TestChecksumStableAcrossIterationOrder(t *testing.T) {
	v := Values{}
	for i := range 200 {
		v[string(rune('a'+i%26))+string(rune('A'+i/26))] = map[string]any{"i": i, "j": []any{i, "x"}}
	}
	want := Checksum(v)
	for range 20 {
		if got := Checksum(v.DeepCopy()); got != want {
			t.Fatalf("Checksum() = %s, want %s", got, want)
		}
	}
}
