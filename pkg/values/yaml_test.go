package values

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFromYAMLCoreWords(t *testing.T) {
	// Plain scalars whose meaning differs between YAML 1.1 and 1.2 core
	// rules, with what they decode to under 1.2.
	words := []struct {
		word string
		want any
	}{
		{"on", "on"}, {"On", "On"}, {"ON", "ON"},
		{"off", "off"}, {"Off", "Off"}, {"OFF", "OFF"},
		{"yes", "yes"}, {"Yes", "Yes"}, {"YES", "YES"},
		{"no", "no"}, {"No", "No"}, {"NO", "NO"},
		{"y", "y"}, {"Y", "Y"}, {"n", "n"}, {"N", "N"},
		{"true", true}, {"True", true}, {"TRUE", true},
		{"false", false}, {"False", false}, {"FALSE", false},
		{"null", nil}, {"~", nil},
		{"0o17", 15.0}, {"0x1F", 31.0}, {"1e3", 1000.0},
		{"2026-01-02", "2026-01-02"}, {"2026-01-02T10:00:00Z", "2026-01-02T10:00:00Z"},
	}
	for _, w := range words {
		t.Run(w.word, func(t *testing.T) {
			got, err := FromYAML([]byte("value: " + w.word + "\nlist: [" + w.word + "]\n"))
			if err != nil {
				t.Fatalf("FromYAML() error = %v", err)
			}
			want := Values{"value": w.want, "list": []any{w.want}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("FromYAML() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromYAMLKeys(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Values
	}{
		{name: "y stays y", in: "y: 1\nn: 2\n", want: Values{"y": 1.0, "n": 2.0}},
		{name: "on off yes no stay words", in: "on: a\noff: b\nyes: c\nNO: d\n", want: Values{"on": "a", "off": "b", "yes": "c", "NO": "d"}},
		{name: "boolean keys are their text", in: "true: a\nTrue: b\n", want: Values{"true": "a", "True": "b"}},
		{name: "number keys are their text", in: "1: a\n0.50: b\n0x1F: c\n", want: Values{"1": "a", "0.50": "b", "0x1F": "c"}},
		{name: "null and timestamp keys are their text", in: "a: {~: x, null: y, 2026-01-02: z}\n", want: Values{"a": map[string]any{"~": "x", "null": "y", "2026-01-02": "z"}}},
		{name: "alias key takes its anchor's value", in: "a: &k 1\n*k : b\n", want: Values{"a": 1.0, "1": "b"}},
		{
			name: "anchors, aliases and merge keys",
			in:   "base: &b {port: 80, mode: off}\nhttp: *b\nhttps:\n  <<: *b\n  port: 443\n",
			want: Values{
				"base":  map[string]any{"port": 80.0, "mode": "off"},
				"http":  map[string]any{"port": 80.0, "mode": "off"},
				"https": map[string]any{"port": 443.0, "mode": "off"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromYAML([]byte(tt.in))
			if err != nil {
				t.Fatalf("FromYAML() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("FromYAML() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromYAMLErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{name: "unclosed flow list names its line", in: "a: 1\nb: [1, 2\n", want: "decode yaml values: yaml: line 2: did not find expected ',' or ']'"},
		{name: "unclosed quote names the line after it", in: "a: 1\nb: \"abc\n", want: "decode yaml values: yaml: line 3: found unexpected end of stream"},
		{name: "bad indentation", in: "a:\n  b: 1\n c: 2\n", want: "decode yaml values: yaml: line 2: did not find expected key"},
		{name: "duplicate key names both lines", in: "a: 1\na: 2\n", want: "decode yaml values: yaml: unmarshal errors:\n  line 2: mapping key \"a\" already defined at line 1"},
		{name: "infinity is not a JSON number", in: "a:\n  b: [.inf]\n", want: "decode yaml values: a.b[0]: +Inf is not a JSON number"},
		{name: "not a number", in: ".nan\n", want: "decode yaml values: top level: NaN is not a JSON number"},
		{name: "map as a key", in: "? {a: 1}\n: x\n", want: "decode yaml values: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromYAML([]byte(tt.in))
			checkErr(t, err, tt.want)
		})
	}
}
