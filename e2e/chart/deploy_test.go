package chart

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"
)

const (
	// repoRoot is the repository root, from this package's directory.
	repoRoot = "../.."
	// deployFile holds the plain manifests, relative to repoRoot, and
	// crdsFile the CRDs, apart.
	deployFile = "deploy/addon-operator.yaml"
	crdsFile   = "deploy/crds.yaml"
)

// TestPlainManifestsApply applies deploy/ as kubectl apply --server-side
// would, into its own namespace addon-operator, which no other test uses.
func TestPlainManifestsApply(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(repoRoot, deployFile))
	if err != nil {
		t.Fatal(err)
	}
	objs := decodeManifests(t, data)
	if got := objs[0].GetKind(); got != "Namespace" {
		t.Fatalf("first object is a %s, want the Namespace, so that one apply creates everything", got)
	}
	crds, err := os.ReadFile(filepath.Join(repoRoot, crdsFile))
	if err != nil {
		t.Fatal(err)
	}
	// The CRDs first, as the docs say.
	objs = append(decodeManifests(t, crds), objs...)
	dyn, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("map %s: %v", gvk, err)
		}
		var client dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			// Events about cluster-scoped Module objects live in default.
			moduleEvents := obj.GetNamespace() == "default" && strings.HasSuffix(obj.GetName(), "-module-events")
			if obj.GetNamespace() != "addon-operator" && !moduleEvents {
				t.Errorf("%s %s has namespace %q, want addon-operator", gvk.Kind, obj.GetName(), obj.GetNamespace())
			}
			client = dyn.Resource(mapping.Resource).Namespace(obj.GetNamespace())
		}
		if _, err := client.Apply(t.Context(), obj.GetName(), &obj, metav1.ApplyOptions{FieldManager: "e2e-chart", Force: true}); err != nil {
			t.Errorf("apply %s %s: %v", gvk.Kind, obj.GetName(), err)
		}
	}
	// The plain manifests are the chart's defaults: the same Deployment.
	checkDeployment(t, "addon-operator")
	checkRole(t, "addon-operator", append(operatorRules("addon-operator"), defaultModuleRules()...))
}

// decodeManifests parses a multi-document YAML stream, skipping empty
// documents.
func decodeManifests(t *testing.T, data []byte) []unstructured.Unstructured {
	t.Helper()
	var objs []unstructured.Unstructured
	for doc := range strings.SplitSeq(string(data), "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("parse document: %v\n%s", err, doc)
		}
		if len(obj) > 0 {
			objs = append(objs, unstructured.Unstructured{Object: obj})
		}
	}
	if len(objs) == 0 {
		t.Fatal("no objects in the manifests")
	}
	return objs
}

// TestGendeployCheck runs the real program as make check-deploy does: it
// passes on the committed deploy/ and fails, with a hint, on a stale copy.
func TestGendeployCheck(t *testing.T) {
	t.Parallel()
	stale := filepath.Join(t.TempDir(), "stale.yaml")
	data, err := os.ReadFile(filepath.Join(repoRoot, deployFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, bytes.Replace(data, []byte("LOG_LEVEL"), []byte("LOG_LEVEL_"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		stderr   []string
	}{
		{name: "committed", args: []string{"-check"}},
		{name: "stale", args: []string{"-check", "-out", stale}, wantCode: 1, stderr: []string{"out of sync with the chart", "LOG_LEVEL_", "make deploy"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.CommandContext(t.Context(), "go", append([]string{"run", "./hack/gendeploy"}, tt.args...)...)
			cmd.Dir = repoRoot
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			code := 0
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatalf("go run ./hack/gendeploy: %v", err)
			}
			if diff := cmp.Diff(tt.wantCode, code); diff != "" {
				t.Errorf("exit code (-want +got):\n%s\nstderr: %s", diff, stderr.String())
			}
			for _, s := range tt.stderr {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr %q does not contain %q", stderr.String(), s)
				}
			}
		})
	}
}
