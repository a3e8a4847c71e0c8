package manifest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// Labels of the operator's objects, as pkg/helm sets them.
const (
	labelManagedBy = "addon-operator.io/managed-by"
	managedByValue = "addon-operator"
	labelModule    = "addon-operator.io/module"
)

// testLabels are the labels pkg/helm sets on the objects of release echo.
func testLabels() map[string]string {
	return map[string]string{labelManagedBy: managedByValue, labelModule: "echo"}
}

//nolint:gochecknoglobals // a test flag must be registered at package init; it is only read
var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func TestLabelerGolden(t *testing.T) {
	input, err := os.ReadFile(filepath.Join("testdata", "postrender", "input.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := NewLabeler(testLabels()).Run(bytes.NewBuffer(input))
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
	l := NewLabeler(testLabels())
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
			want: map[string]string{labelManagedBy: managedByValue, labelModule: "echo"},
		},
		{
			name:  "helm's own labels",
			chart: map[string]string{"heritage": "Helm", "app.kubernetes.io/managed-by": "Helm", "release": "echo"},
			want: map[string]string{
				"heritage": "Helm", "app.kubernetes.io/managed-by": "Helm", "release": "echo",
				labelManagedBy: managedByValue, labelModule: "echo",
			},
		},
		{
			name:  "the label an earlier version set",
			chart: map[string]string{"heritage": "addon-operator"},
			want:  map[string]string{"heritage": "addon-operator", labelManagedBy: managedByValue, labelModule: "echo"},
		},
		{
			name:  "keys under the operator's prefix are the operator's",
			chart: map[string]string{labelModule: "other", labelManagedBy: "someone"},
			want:  map[string]string{labelManagedBy: managedByValue, labelModule: "echo"},
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
			out, err := NewLabeler(testLabels()).Run(bytes.NewBuffer(raw))
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

func TestExtendsAPI(t *testing.T) {
	tests := map[string]struct {
		manifest string
		want     bool
	}{
		"crd":                     {"---\n# Source: m/templates/crd.yaml\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\n", true},
		"apiservice among others": {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata:\n  name: v1.example.com\n", true},
		"plain objects":           {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: b\n", false},
		"kind named in data only": {"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  note: kind CustomResourceDefinition\n", false},
		"same kind, other group":  {"apiVersion: example.com/v1\nkind: APIService\nmetadata:\n  name: a\n", false},
		"empty":                   {"", false},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ExtendsAPI(tt.manifest); got != tt.want {
				t.Errorf("ExtendsAPI = %v, want %v", got, tt.want)
			}
		})
	}
}
