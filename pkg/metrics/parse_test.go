package metrics

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseHookMetrics(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []HookMetric
	}{
		{name: "empty", input: "", want: nil},
		{name: "blank lines", input: "\n  \n\t\n", want: nil},
		{
			name: "every action, one a line",
			input: `{"name":"c","action":"add","value":2,"labels":{"kind":"pod"}}
{"name":"g","action":"set","value":-1.5,"group":"grp"}

{"name":"h","action":"observe","value":0.3,"buckets":[0.1,1]}
{"group":"grp","action":"expire"}
`,
			want: []HookMetric{
				{Name: "c", Action: ActionAdd, Value: 2, Labels: map[string]string{"kind": "pod"}},
				{Name: "g", Group: "grp", Action: ActionSet, Value: -1.5},
				{Name: "h", Action: ActionObserve, Value: 0.3, Buckets: []float64{0.1, 1}},
				{Group: "grp", Action: ActionExpire},
			},
		},
		{
			name:  "add and set shortcuts",
			input: `{"name":"c","add":1}` + "\n" + `{"name":"g","set":7,"action":"set"}`,
			want: []HookMetric{
				{Name: "c", Action: ActionAdd, Value: 1},
				{Name: "g", Action: ActionSet, Value: 7},
			},
		},
		{
			name:  "array, concatenated objects and unknown fields",
			input: `[{"name":"a","set":1},` + "\n" + `{"name":"b","set":2}] {"name":"c","set":3}{"name":"d","set":4,"extra":true}`,
			want: []HookMetric{
				{Name: "a", Action: ActionSet, Value: 1},
				{Name: "b", Action: ActionSet, Value: 2},
				{Name: "c", Action: ActionSet, Value: 3},
				{Name: "d", Action: ActionSet, Value: 4},
			},
		},
		{name: "empty array", input: "[]\n[ ]", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHookMetrics([]byte(tt.input))
			if err != nil {
				t.Fatalf("ParseHookMetrics: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("metrics mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// okLine is a valid METRICS_PATH line, to put bad ones on later lines.
const okLine = `{"name":"ok","action":"set","value":1}` + "\n"

// parseErrorCase is METRICS_PATH content and the error it must yield.
type parseErrorCase struct {
	name    string
	input   string
	wantErr string
}

func TestParseErrorsMissingFields(t *testing.T) {
	runParseErrorCases(t, []parseErrorCase{
		{
			name:    "missing value",
			input:   okLine + `{"name":"a","action":"set"}`,
			wantErr: `line 2: field "value": required for action "set"`,
		},
		{
			name:    "missing action",
			input:   `{"name":"a","value":1}`,
			wantErr: `line 1: field "action": required: one of add, set, observe, expire (or the "add"/"set" shortcut)`,
		},
		{
			name:    "expire without group",
			input:   `{"action":"expire"}`,
			wantErr: `line 1: field "group": required for action "expire"`,
		},
		{
			name:    "missing name",
			input:   `{"action":"add","value":1}`,
			wantErr: `line 1: field "name": required for action "add"`,
		},
	})
}

func TestParseErrorsInvalidFields(t *testing.T) {
	runParseErrorCases(t, []parseErrorCase{
		{
			name:    "unknown action",
			input:   okLine + okLine + `{"name":"a","action":"inc","value":1}`,
			wantErr: `line 3: field "action": unknown action "inc" (want add, set, observe or expire)`,
		},
		{
			name:    "invalid name",
			input:   `{"name":"my-metric","action":"add","value":1}`,
			wantErr: `line 1: field "name": invalid metric name "my-metric" (want [a-zA-Z_:][a-zA-Z0-9_:]*)`,
		},
		{
			name:    "invalid label name",
			input:   `{"name":"a","action":"add","value":1,"labels":{"__x":"1"}}`,
			wantErr: `line 1: field "labels": invalid label name "__x" (want [a-zA-Z_][a-zA-Z0-9_]*, no leading __)`,
		},
		{
			name:    "le label on a histogram",
			input:   `{"name":"a","action":"observe","value":1,"labels":{"le":"1"}}`,
			wantErr: `line 1: field "labels": label "le" is reserved for histogram buckets`,
		},
		{
			name:    "negative add",
			input:   `{"name":"a","add":-1}`,
			wantErr: `line 1: field "value": a counter only grows: want a finite number >= 0, got -1`,
		},
		{
			name:    "buckets not increasing",
			input:   `{"name":"a","action":"observe","value":1,"buckets":[1,1,2]}`,
			wantErr: `line 1: field "buckets": want finite, strictly increasing bounds, got [1 1 2]`,
		},
	})
}

func TestParseErrorsShortcuts(t *testing.T) {
	runParseErrorCases(t, []parseErrorCase{
		{
			name:    "add and set",
			input:   `{"name":"a","add":1,"set":1}`,
			wantErr: `line 1: field "add": "add" and "set" are mutually exclusive`,
		},
		{
			name:    "action contradicts shortcut",
			input:   `{"name":"a","action":"set","add":1}`,
			wantErr: `line 1: field "action": action "set" contradicts the "add" shortcut`,
		},
		{
			name:    "value twice",
			input:   `{"name":"a","value":2,"add":1}`,
			wantErr: `line 1: field "value": value given twice, also as "add"`,
		},
	})
}

func TestParseErrorsSyntax(t *testing.T) {
	runParseErrorCases(t, []parseErrorCase{
		{
			name:    "wrong type, line inside a multi-line object",
			input:   okLine + "{\n  \"name\": \"a\",\n  \"action\": \"set\",\n  \"value\": \"1\"\n}",
			wantErr: `line 5: field "value": cannot use a JSON string as float64`,
		},
		{
			name:    "not an object",
			input:   okLine + `[5]`,
			wantErr: `line 2: want a JSON object, got a JSON number`,
		},
		{
			name:    "syntax error",
			input:   okLine + okLine + `{"name": }`,
			wantErr: `line 3: invalid character '}' looking for beginning of value`,
		},
		{
			name:    "truncated",
			input:   okLine + `{"name":"a"`,
			wantErr: `line 2: unexpected EOF`,
		},
		{
			name:  "every bad line is reported",
			input: `{"name":"a","action":"set"}` + "\n" + okLine + `{"name":"b","add":-2}`,
			wantErr: `line 1: field "value": required for action "set"` + "\n" +
				`line 3: field "value": a counter only grows: want a finite number >= 0, got -2`,
		},
	})
}

func runParseErrorCases(t *testing.T, tests []parseErrorCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHookMetrics([]byte(tt.input))
			if err == nil {
				t.Fatalf("ParseHookMetrics = %v, want error %q", got, tt.wantErr)
			}
			if err.Error() != tt.wantErr {
				t.Errorf("error:\n got %q\nwant %q", err, tt.wantErr)
			}
			if got != nil {
				t.Errorf("metrics = %v, want none with an error", got)
			}
			if pe := (*ParseError)(nil); !errors.As(err, &pe) {
				t.Errorf("error %v is not a *ParseError", err)
			}
		})
	}
}
