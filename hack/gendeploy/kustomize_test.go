package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// overlayDir is the example overlay, from this package's directory.
const overlayDir = "../../docs/examples/overlay"

// built is one object of a kustomize build, as far as the test reads it.
type built struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Subjects []struct {
		Kind      string `json:"kind"`
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"subjects"`
	Spec struct {
		Template struct {
			Spec struct {
				Containers []struct {
					Image string `json:"image"`
				} `json:"containers"`
			} `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

// buildOverlay runs kustomize build over dir with kubectl apply -k's
// defaults (files only below the kustomization's root).
func buildOverlay(t *testing.T, dir string) []built {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	out := make([]built, 0, len(res.Resources()))
	for _, r := range res.Resources() {
		data, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		var b built
		if err := yaml.Unmarshal(data, &b); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		out = append(out, b)
	}
	return out
}

// TestExampleOverlay builds docs/examples/overlay as kubectl apply -k
// does: every object of the operator is in the overlay's namespace, every
// binding names the ServiceAccount there, the Deployment runs the
// overlay's image, the Events Role stays in default, and no CRD is in
// the build, so that kubectl delete -k keeps the configuration.
func TestExampleOverlay(t *testing.T) {
	const ns, image = "platform", "registry.example.com/addon-operator:v1.2.3"
	objs := buildOverlay(t, overlayDir)
	if len(objs) < 10 {
		t.Fatalf("the overlay built %d objects, want the operator's manifests", len(objs))
	}
	var images []string
	for _, o := range objs {
		where := o.Kind + " " + o.Metadata.Namespace + "/" + o.Metadata.Name
		switch {
		case o.Kind == "CustomResourceDefinition":
			t.Errorf("%s is in the build: kubectl delete -k would delete every Module and ModuleConfig", where)
		case o.Kind == "Namespace":
			if o.Metadata.Name != ns {
				t.Errorf("%s, want the Namespace %s", where, ns)
			}
		case o.Metadata.Name == "addon-operator-addon-operator-module-events":
			if o.Metadata.Namespace != "default" {
				t.Errorf("%s, want it in default, where the Events about Module objects go", where)
			}
		case o.Metadata.Namespace != "" && o.Metadata.Namespace != ns:
			t.Errorf("%s, want namespace %s", where, ns)
		}
		for _, s := range o.Subjects {
			if s.Kind == "ServiceAccount" && s.Namespace != ns {
				t.Errorf("%s binds ServiceAccount %s/%s, want namespace %s", where, s.Namespace, s.Name, ns)
			}
		}
		for _, c := range o.Spec.Template.Spec.Containers {
			images = append(images, c.Image)
		}
	}
	if diff := cmp.Diff([]string{image}, images); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
}
