package monitor

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/kube"
)

// monitorSpec is a binding translated into informers: one per object name
// (the API cannot select several names at once) in each watched namespace,
// each listing with the binding's label and field selectors, so the API
// server does all the selecting.
type monitorSpec struct {
	resource      kube.Resource
	labelSelector string
	// fieldSelector is nil without one.
	fieldSelector fields.Selector
	// names has an informer each; [""] watches every name.
	names []string
	// namespaces has an informer group each; [""] is all namespaces (or a
	// cluster-scoped kind). Empty when namespaces are followed by label.
	namespaces []string
	// followNamespaces is set for namespace.labelSelector: the namespaces
	// matching namespaceLabels (and, when namespaceNames is not nil, named
	// in it) are watched, and the set is kept up to date while running.
	followNamespaces bool
	namespaceLabels  string
	namespaceNames   map[string]bool
	filter           monitorFilter
	events           []hook.WatchEvent
}

// newMonitorSpec checks b against its resolved resource and plans its
// informers. Errors wrap ErrInvalidBinding.
func newMonitorSpec(b hook.KubernetesBinding, res kube.Resource) (monitorSpec, error) {
	s := monitorSpec{resource: res, names: []string{""}, events: slices.Clone(b.ExecuteHookOnEvent)}
	code, err := compileJQ(b.JqFilter)
	if err != nil {
		return monitorSpec{}, fmt.Errorf("%w: jqFilter %q: %w", ErrInvalidBinding, b.JqFilter, err)
	}
	s.filter = monitorFilter{jq: code, keepFull: b.KeepFullObjectsInMemory}
	if s.labelSelector, err = monLabelSelector(b.LabelSelector); err != nil {
		return monitorSpec{}, fmt.Errorf("%w: labelSelector: %w", ErrInvalidBinding, err)
	}
	if b.FieldSelector != nil {
		s.fieldSelector = b.FieldSelector.Selector()
	}
	if b.NameSelector != nil && len(b.NameSelector.MatchNames) > 0 {
		s.names = sortedSet(b.NameSelector.MatchNames)
	}
	if err := s.planNamespaces(b.Namespace); err != nil {
		return monitorSpec{}, err
	}
	return s, nil
}

// planNamespaces sets the namespaces to watch. With both selectors of
// namespace set, a namespace must match both; the reference ignored the
// nameSelector then.
func (s *monitorSpec) planNamespaces(ns *hook.NamespaceSelector) error {
	s.namespaces = []string{""}
	if ns == nil {
		return nil
	}
	if !s.resource.Namespaced {
		return fmt.Errorf("%w: namespace selector on cluster-scoped kind %s", ErrInvalidBinding, s.resource.Kind)
	}
	var names []string
	if ns.NameSelector != nil && len(ns.NameSelector.MatchNames) > 0 {
		names = sortedSet(ns.NameSelector.MatchNames)
	}
	if ns.LabelSelector == nil {
		if names != nil {
			s.namespaces = names
		}
		return nil
	}
	sel, err := monLabelSelector(ns.LabelSelector)
	if err != nil {
		return fmt.Errorf("%w: namespace.labelSelector: %w", ErrInvalidBinding, err)
	}
	s.namespaces, s.followNamespaces, s.namespaceLabels = nil, true, sel
	if names != nil {
		s.namespaceNames = make(map[string]bool, len(names))
		for _, n := range names {
			s.namespaceNames[n] = true
		}
	}
	return nil
}

// listOptions returns the list options of the informer for name ("" for
// every name).
func (s *monitorSpec) listOptions(name string) metav1.ListOptions {
	var sel []fields.Selector
	if name != "" {
		sel = append(sel, fields.OneTermEqualSelector("metadata.name", name))
	}
	if s.fieldSelector != nil {
		sel = append(sel, s.fieldSelector)
	}
	return metav1.ListOptions{LabelSelector: s.labelSelector, FieldSelector: fields.AndSelectors(sel...).String()}
}

// matchingNamespaces returns, sorted, the followed namespaces among names
// (the keys of the namespace informer's store).
func (s *monitorSpec) matchingNamespaces(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if s.namespaceNames == nil || s.namespaceNames[n] {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// monLabelSelector converts a label selector to its API string; nil selects
// everything.
func monLabelSelector(ls *metav1.LabelSelector) (string, error) {
	if ls == nil {
		return "", nil
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return "", err
	}
	return sel.String(), nil
}

// sortedSet returns the distinct values of in, sorted.
func sortedSet(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return slices.Compact(out)
}
