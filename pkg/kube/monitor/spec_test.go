package monitor

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/kube"
)

// testResource is the ConfigMap resource as resolved from discovery.
func testResource() kube.Resource {
	return kube.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Kind: "ConfigMap", Namespaced: true}
}

// monInformer is one planned informer.
type monInformer struct{ Namespace, Name, LabelSelector, FieldSelector string }

// monPlan is what a test compares of a monitorSpec.
type monPlan struct {
	Informers       []monInformer
	Follow          bool
	NamespaceLabels string
	NamespaceNames  map[string]bool
}

type specCase struct {
	name    string
	binding hook.KubernetesBinding
	want    monPlan
}

func specCases() []specCase {
	app := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x"}}
	tier := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"cache", "db"}},
	}}
	fieldSel := &hook.FieldSelector{MatchExpressions: []hook.FieldRequirement{
		{Field: "metadata.namespace", Operator: hook.FieldNotEquals, Value: "kube-system"},
	}}
	return []specCase{
		{name: "everything", want: monPlan{Informers: []monInformer{{}}}},
		{
			name:    "names get an informer each, deduplicated",
			binding: hook.KubernetesBinding{NameSelector: &hook.NameSelector{MatchNames: []string{"b", "a", "b"}}},
			want: monPlan{Informers: []monInformer{
				{Name: "a", FieldSelector: "metadata.name=a"},
				{Name: "b", FieldSelector: "metadata.name=b"},
			}},
		},
		{
			name:    "empty matchNames watch every name",
			binding: hook.KubernetesBinding{NameSelector: &hook.NameSelector{MatchNames: []string{}}},
			want:    monPlan{Informers: []monInformer{{}}},
		},
		{
			name:    "label and field selectors are server-side",
			binding: hook.KubernetesBinding{LabelSelector: tier, FieldSelector: fieldSel},
			want: monPlan{Informers: []monInformer{
				{LabelSelector: "tier in (cache,db)", FieldSelector: "metadata.namespace!=kube-system"},
			}},
		},
		{
			name: "a name is ANDed with the field selector",
			binding: hook.KubernetesBinding{
				NameSelector: &hook.NameSelector{MatchNames: []string{"a"}}, FieldSelector: fieldSel,
			},
			want: monPlan{Informers: []monInformer{
				{Name: "a", FieldSelector: "metadata.name=a,metadata.namespace!=kube-system"},
			}},
		},
		{
			name: "namespaces by name times object names",
			binding: hook.KubernetesBinding{
				NameSelector: &hook.NameSelector{MatchNames: []string{"a"}},
				Namespace:    &hook.NamespaceSelector{NameSelector: &hook.NameSelector{MatchNames: []string{"n2", "n1"}}},
			},
			want: monPlan{Informers: []monInformer{
				{Namespace: "n1", Name: "a", FieldSelector: "metadata.name=a"},
				{Namespace: "n2", Name: "a", FieldSelector: "metadata.name=a"},
			}},
		},
		{
			name:    "namespaces by label are followed",
			binding: hook.KubernetesBinding{Namespace: &hook.NamespaceSelector{LabelSelector: app}},
			want:    monPlan{Follow: true, NamespaceLabels: "app=x"},
		},
		{
			name: "namespace name and label selectors must both match",
			binding: hook.KubernetesBinding{Namespace: &hook.NamespaceSelector{
				LabelSelector: app, NameSelector: &hook.NameSelector{MatchNames: []string{"n1"}},
			}},
			want: monPlan{Follow: true, NamespaceLabels: "app=x", NamespaceNames: map[string]bool{"n1": true}},
		},
	}
}

func TestMonitorSpec(t *testing.T) {
	for _, tt := range specCases() {
		t.Run(tt.name, func(t *testing.T) {
			s, err := newMonitorSpec(tt.binding, testResource())
			if err != nil {
				t.Fatalf("newMonitorSpec: %v", err)
			}
			got := monPlan{Follow: s.followNamespaces, NamespaceLabels: s.namespaceLabels, NamespaceNames: s.namespaceNames}
			for _, ns := range s.namespaces {
				for _, name := range s.names {
					o := s.listOptions(name)
					got.Informers = append(got.Informers, monInformer{ns, name, o.LabelSelector, o.FieldSelector})
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMonitorSpecRejects(t *testing.T) {
	namespaces := kube.Resource{GVR: schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, Kind: "Namespace"}
	tests := []struct {
		name    string
		binding hook.KubernetesBinding
		res     kube.Resource
	}{
		{name: "jq that does not compile", binding: hook.KubernetesBinding{JqFilter: ".a | undefined_fn"}, res: testResource()},
		{
			name: "bad label selector",
			binding: hook.KubernetesBinding{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "k", Operator: "Near"},
			}}},
			res: testResource(),
		},
		{
			name: "namespace selector on a cluster-scoped kind",
			binding: hook.KubernetesBinding{Namespace: &hook.NamespaceSelector{
				NameSelector: &hook.NameSelector{MatchNames: []string{"default"}},
			}},
			res: namespaces,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newMonitorSpec(tt.binding, tt.res)
			if !errors.Is(err, ErrInvalidBinding) {
				t.Errorf("err = %v, want ErrInvalidBinding", err)
			}
		})
	}
}

func TestMonitorMatchingNamespaces(t *testing.T) {
	s := monitorSpec{}
	if got, want := s.matchingNamespaces([]string{"b", "a"}), []string{"a", "b"}; !cmp.Equal(got, want) {
		t.Errorf("any name: %v, want %v", got, want)
	}
	s.namespaceNames = map[string]bool{"b": true}
	if got, want := s.matchingNamespaces([]string{"b", "a"}), []string{"b"}; !cmp.Equal(got, want) {
		t.Errorf("named: %v, want %v", got, want)
	}
}
