package plan

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/helm/kubeversion"
	"github.com/addon-operator/addon-operator/pkg/kube"
)

// RenderOptions say what an offline render claims of the cluster and which
// templates it keeps.
type RenderOptions struct {
	Capabilities helm.Capabilities
	// ShowOnly keeps only the documents of these templates, named as in
	// their "# Source:" line with or without the chart name
	// ("templates/cm.yaml" or "web/templates/cm.yaml"). Empty keeps all.
	ShowOnly []string
}

// Rendered is a module's offline render.
type Rendered struct {
	*helm.Rendered
	// Warnings name the objects whose API version the target Kubernetes
	// version no longer serves.
	Warnings []string
}

// RenderWith renders a module as Render does, with the capabilities and
// filter of o, and warns about APIs the target version removed.
func (x *Offline) RenderWith(ctx context.Context, name string, o RenderOptions) (*Rendered, error) {
	m, err := x.module(name)
	if err != nil {
		return nil, err
	}
	if !m.IsHelm() {
		return nil, fmt.Errorf("module %q has no chart (neither Chart.yaml nor templates/)", name)
	}
	v, err := x.Values(name)
	if err != nil {
		return nil, err
	}
	r, err := helm.RenderOfflineWith(ctx, x.ns, helm.Release{Name: name, ChartDir: m.Path(), Values: map[string]any(v)}, o.Capabilities)
	if err != nil {
		return nil, fmt.Errorf("module %s (%s): %w", name, m.Path(), err)
	}
	if len(o.ShowOnly) > 0 {
		if r, err = showOnly(r, o.ShowOnly); err != nil {
			return nil, fmt.Errorf("module %s: %w", name, err)
		}
	}
	target := o.Capabilities.KubeVersion
	if target == "" {
		target = kubeversion.Default()
	}
	warnings, err := RemovedAPIs(append([]string{r.Manifest}, r.Hooks...), target)
	if err != nil {
		return nil, fmt.Errorf("module %s: %w", name, err)
	}
	return &Rendered{Rendered: r, Warnings: warnings}, nil
}

// showOnly keeps the documents of the named templates.
func showOnly(r *helm.Rendered, templates []string) (*helm.Rendered, error) {
	found := map[string]bool{}
	keep := func(doc string) bool {
		src := sourceOf(doc)
		for _, t := range templates {
			_, rel, _ := strings.Cut(src, "/")
			if src == t || rel == t {
				found[t] = true
				return true
			}
		}
		return false
	}
	out := &helm.Rendered{Checksum: r.Checksum}
	var docs []string
	for doc := range strings.SplitSeq(r.Manifest, "---\n") {
		if strings.TrimSpace(doc) != "" && keep(doc) {
			docs = append(docs, "---\n"+doc)
		}
	}
	out.Manifest = strings.Join(docs, "")
	for _, h := range r.Hooks {
		if keep(h) {
			out.Hooks = append(out.Hooks, h)
		}
	}
	for _, t := range templates {
		if !found[t] {
			return nil, fmt.Errorf("could not find template %s in chart", t)
		}
	}
	return out, nil
}

// sourceOf returns the template path of a document's "# Source:" line.
func sourceOf(doc string) string {
	for line := range strings.SplitSeq(doc, "\n") {
		if src, ok := strings.CutPrefix(line, "# Source: "); ok {
			return strings.TrimSpace(src)
		}
	}
	return ""
}

// RemovedAPIs names every object of the manifests whose API version
// Kubernetes removed in kubeVersion or before, as the Kubernetes API
// packages record it (for example extensions/v1beta1 Ingress, removed in
// 1.22).
func RemovedAPIs(manifests []string, kubeVersion string) ([]string, error) {
	target, err := version.ParseGeneric(kubeVersion)
	if err != nil {
		return nil, fmt.Errorf("kube version %q: %w", kubeVersion, err)
	}
	var out []string
	for _, manifest := range manifests {
		objs, err := kube.ManifestObjects(manifest)
		if err != nil {
			return nil, err
		}
		for _, obj := range objs {
			u := unstructured.Unstructured{Object: obj}
			typed, err := scheme.Scheme.New(u.GroupVersionKind())
			if err != nil {
				continue // not a built-in kind
			}
			r, ok := typed.(interface{ APILifecycleRemoved() (int, int) })
			if !ok {
				continue
			}
			major, minor := r.APILifecycleRemoved()
			if major == 0 || target.LessThan(version.MajorMinor(uint(major), uint(minor))) {
				continue
			}
			out = append(out, fmt.Sprintf("%s %s %q: %s was removed in Kubernetes %d.%d; rendering for %s",
				u.GetAPIVersion(), u.GetKind(), u.GetName(), u.GetAPIVersion(), major, minor, kubeVersion))
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
