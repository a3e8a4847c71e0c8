package bench

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/e2e/cluster"
	"github.com/addon-operator/addon-operator/pkg/helm"
)

// The Deployment shape renders, through the operator's Helm code, the
// ConfigMap, the ServiceAccount, the Service and a Deployment of one
// replica whose Pod carries the start delay and selects the Service, and
// no Secret.
func TestGenerateDeploymentShape(t *testing.T) {
	l, err := Generate(t.TempDir(), 2, 2, Workload{Hooks: HooksJQ, Deployment: true, StartDelay: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(l.ModulesDir, "010-mod2")
	vals := moduleValues(t, dir)
	vals["global"] = map[string]any{}
	r, err := helm.RenderOffline(t.Context(), "bench", helm.Release{Name: "mod2", ChartDir: dir, Values: vals})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var d *appsv1.Deployment
	for doc := range strings.SplitSeq(r.Manifest, "\n---") {
		var o object
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, o.Kind+"/"+o.Metadata.Name)
		if o.Kind == "Deployment" {
			d = &appsv1.Deployment{}
			if err := yaml.UnmarshalStrict([]byte(strings.TrimPrefix(doc, "\n")), d); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []string{"ServiceAccount/mod2", "ConfigMap/mod2", "Service/mod2", "Deployment/mod2"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Fatalf("rendered objects (-want +got):\n%s", diff)
	}
	pod := d.Spec.Template
	got := []any{*d.Spec.Replicas, pod.Annotations[cluster.AnnotationStartDelay], pod.Labels["app"], d.Spec.Selector.MatchLabels["app"],
		pod.Spec.ServiceAccountName, len(pod.Spec.Containers)}
	if diff := cmp.Diff([]any{int32(1), "2s", "mod2", "mod2", "mod2", 1}, got); diff != "" {
		t.Errorf("replicas, start delay, Pod label, selector, service account, containers (-want +got):\n%s", diff)
	}

	l, err = Generate(t.TempDir(), 1, 1, Workload{Hooks: HooksJQ, Deployment: true})
	if err != nil {
		t.Fatal(err)
	}
	r, err = helm.RenderOffline(t.Context(), "bench", helm.Release{Name: "mod1", ChartDir: filepath.Join(l.ModulesDir, "010-mod1"),
		Values: map[string]any{"mod1": map[string]any{"config": "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(r.Manifest, cluster.AnnotationStartDelay+`: "0s"`) {
		t.Errorf("no delay: manifest without a 0s start delay:\n%s", r.Manifest)
	}
}

func deployment(generation, observed int64, replicas *int32, updated, available, total int32) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Generation: generation},
		Spec:       appsv1.DeploymentSpec{Replicas: replicas},
		Status: appsv1.DeploymentStatus{
			ObservedGeneration: observed, UpdatedReplicas: updated, AvailableReplicas: available, Replicas: total,
		},
	}
}

func TestDeploymentAvailable(t *testing.T) {
	two := int32(2)
	tests := []struct {
		name string
		d    *appsv1.Deployment
		want bool
	}{
		{"new, nothing observed", deployment(1, 0, nil, 0, 0, 0), false},
		{"observed, Pod not ready", deployment(1, 1, nil, 1, 0, 1), false},
		{"one replica available", deployment(1, 1, nil, 1, 1, 1), true},
		{"one of two available", deployment(1, 1, &two, 2, 1, 2), false},
		{"two of two", deployment(1, 1, &two, 2, 2, 2), true},
		{"spec changed, not yet observed", deployment(2, 1, nil, 1, 1, 1), false},
		{"rollout: an old replica left", deployment(2, 2, nil, 1, 1, 2), false},
	}
	for _, tt := range tests {
		if got := deploymentAvailable(tt.d); got != tt.want {
			t.Errorf("%s: available %t, want %t", tt.name, got, tt.want)
		}
	}
}

func TestAvailableSet(t *testing.T) {
	s := newAvailableSet([]string{"a", "b"})
	steps := []struct {
		name      string
		available bool
		want      bool
	}{
		{"a", true, false},
		{"other", true, false},
		{"b", true, true},
		{"a", false, false}, // a lost its Pod
		{"a", true, true},
	}
	for i, st := range steps {
		if got := s.update(st.name, st.available); got != st.want {
			t.Errorf("step %d (%s %t): all available %t, want %t", i, st.name, st.available, got, st.want)
		}
	}
}

func TestDeployMarkdown(t *testing.T) {
	runs := []DeployResult{
		{N: 100, Delay: 2 * time.Second,
			Ours:      DeploySide{Converge: 5 * time.Second, Available: 4 * time.Second, CPU: 3 * time.Second, Load: "0.5"},
			Reference: &DeploySide{Converge: 80 * time.Second, Available: 82 * time.Second, CPU: 16 * time.Second, Load: "0.7"}},
		{N: 1000, Delay: 0, Ours: DeploySide{Converge: 25 * time.Second, Available: 24 * time.Second, CPU: 30 * time.Second, Load: "1.2"}},
	}
	got := DeployMarkdown(runs)
	for _, want := range []string{
		"| 100 | 2s | 5.0 s | 80.0 s | **16.0x** | 4.0 s | 82.0 s | **20.5x** | 3.0 s | 16.0 s | 0.5, 0.7 |",
		"| 1000 | 0s | 25.0 s | not run | | 24.0 s | not run | | 30.0 s | | 1.2 |",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}

func TestChartsMarkdown(t *testing.T) {
	c := ChartsResult{Charts: []string{"podinfo", "metrics-server"}, Delay: 2 * time.Second,
		Ours:      DeploySide{Converge: 3 * time.Second, Available: 2500 * time.Millisecond, CPU: time.Second, Load: "0.3"},
		Reference: &DeploySide{Available: 10 * time.Second, CPU: 4 * time.Second, Load: "0.4"}}
	want := "| podinfo, metrics-server | 2s | 3.0 s | 2.5 s | 10.0 s | **4.0x** | 1.0 s | 4.0 s | 0.3, 0.4 |\n"
	if got := ChartsMarkdown(c); !strings.HasSuffix(got, want) {
		t.Errorf("table\n%s\nwant its last row %q", got, want)
	}
	c.Reference = nil
	if got := ChartsMarkdown(c); !strings.Contains(got, "| 2.5 s | not run | |") {
		t.Errorf("without the reference:\n%s", got)
	}
}

func TestRatio(t *testing.T) {
	if got := ratio(85*time.Second, 5*time.Second); got != "**17.0x**" {
		t.Errorf("ratio %q", got)
	}
	if got := ratio(0, 5*time.Second); got != "" {
		t.Errorf("missing reference: ratio %q, want empty", got)
	}
}
