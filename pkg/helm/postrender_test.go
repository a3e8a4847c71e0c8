package helm

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

//nolint:gochecknoglobals // a test flag must be registered at package init; it is only read
var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func TestLabelerGolden(t *testing.T) {
	input, err := os.ReadFile(filepath.Join("testdata", "postrender", "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := labeler{labels: objectLabels("echo")}.Run(bytes.NewBuffer(input))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	golden := filepath.Join("testdata", "postrender", "output.golden.yaml")
	if *update {
		if err := os.WriteFile(golden, out.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), out.String()); diff != "" {
		t.Errorf("labelled manifest (-want +got):\n%s", diff)
	}
}

func TestLabelerIdempotent(t *testing.T) {
	input, err := os.ReadFile(filepath.Join("testdata", "postrender", "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	l := labeler{labels: objectLabels("echo")}
	once, err := l.Run(bytes.NewBuffer(input))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	twice, err := l.Run(bytes.NewBuffer(once.Bytes()))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff(once.String(), twice.String()); diff != "" {
		t.Errorf("second run changed the manifest (-once +twice):\n%s", diff)
	}
}

func TestSplitLeadingComments(t *testing.T) {
	tests := []struct {
		name, doc, head, body string
	}{
		{name: "empty", doc: "", head: "", body: ""},
		{name: "body only", doc: "a: 1\n", head: "", body: "a: 1\n"},
		{name: "comments and blanks", doc: "# x\n\n  # y\na: 1\n# z\n", head: "# x\n\n  # y\n", body: "a: 1\n# z\n"},
		{name: "comment without newline", doc: "# x", head: "# x", body: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			head, body := splitLeadingComments(tt.doc)
			if head != tt.head || body != tt.body {
				t.Errorf("splitLeadingComments(%q) = %q, %q; want %q, %q", tt.doc, head, body, tt.head, tt.body)
			}
		})
	}
}

func TestLabelerKeepsChartLabels(t *testing.T) {
	tests := []struct {
		name  string
		chart map[string]string
		want  map[string]string
	}{
		{
			name: "no labels",
			want: map[string]string{LabelManagedBy: ManagedByValue, LabelModule: "echo"},
		},
		{
			name:  "helm's own labels",
			chart: map[string]string{"heritage": "Helm", "app.kubernetes.io/managed-by": "Helm", "release": "echo"},
			want: map[string]string{
				"heritage": "Helm", "app.kubernetes.io/managed-by": "Helm", "release": "echo",
				LabelManagedBy: ManagedByValue, LabelModule: "echo",
			},
		},
		{
			name:  "the label an earlier version set",
			chart: map[string]string{"heritage": "addon-operator"},
			want:  map[string]string{"heritage": "addon-operator", LabelManagedBy: ManagedByValue, LabelModule: "echo"},
		},
		{
			name:  "keys under the operator's prefix are the operator's",
			chart: map[string]string{LabelModule: "other", LabelManagedBy: "someone"},
			want:  map[string]string{LabelManagedBy: ManagedByValue, LabelModule: "echo"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "echo"}}
			if tt.chart != nil {
				chartLabels := map[string]any{}
				for k, v := range tt.chart {
					chartLabels[k] = v
				}
				obj["metadata"].(map[string]any)["labels"] = chartLabels
			}
			raw, err := yaml.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			out, err := labeler{labels: objectLabels("echo")}.Run(bytes.NewBuffer(raw))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			var got struct {
				Metadata struct {
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
			}
			if err := yaml.Unmarshal(bytes.TrimPrefix(out.Bytes(), []byte("---\n")), &got); err != nil {
				t.Fatalf("decode labelled object: %v", err)
			}
			if diff := cmp.Diff(tt.want, got.Metadata.Labels); diff != "" {
				t.Errorf("labels (-want +got):\n%s", diff)
			}
		})
	}
}
