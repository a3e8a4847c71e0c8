// Command namespace-defaults is the namespace-defaults module's hooks
// binary, written with pkg/sdk. Built into the module's hooks/ directory
// (make hooks), it gives every namespace labelled
// addon-operator.io/defaults=enabled a ResourceQuota and a LimitRange named
// namespace-defaults, sized by the module's values, and removes them from
// namespaces that lose the label or start terminating.
//
// It reconciles rather than reacting to single events: the three bindings
// form one group, so every run sees the current snapshots of the labelled
// namespaces and of the objects it made, and beforeHelm (every module run,
// e.g. after the ConfigMap's namespaceDefaults section changed) reapplies
// the values. Deleting one of its objects by hand gets it recreated.
package main

import (
	"context"
	"fmt"
	"os"
	"slices"

	"github.com/addon-operator/addon-operator/pkg/sdk"
)

const (
	objectName = "namespace-defaults"
	moduleKey  = "namespaceDefaults"
	group      = "defaults"
)

func main() {
	sdk.Main(sdk.Hook{Name: "reconcile", Config: config(), Run: reconcile})
}

func config() sdk.Config {
	owned := func(name, kind string) sdk.KubernetesBinding {
		return sdk.KubernetesBinding{
			Name: name, APIVersion: "v1", Kind: kind,
			NameSelector:            &sdk.NameSelector{MatchNames: []string{objectName}},
			LabelSelector:           &sdk.LabelSelector{MatchLabels: map[string]string{"addon-operator.io/module": objectName}},
			JqFilter:                ".metadata.namespace",
			KeepFullObjectsInMemory: sdk.Bool(false),
			ExecuteHookOnEvent:      []string{"Deleted"},
			Group:                   group,
		}
	}
	return sdk.Config{
		BeforeHelm: sdk.Order(10),
		Kubernetes: []sdk.KubernetesBinding{
			{
				Name: "namespaces", APIVersion: "v1", Kind: "Namespace",
				LabelSelector: &sdk.LabelSelector{MatchLabels: map[string]string{"addon-operator.io/defaults": "enabled"}},
				FieldSelector: &sdk.FieldSelector{MatchExpressions: []sdk.FieldExpression{
					{Field: "status.phase", Operator: "NotEquals", Value: "Terminating"},
				}},
				JqFilter:                ".metadata.name",
				KeepFullObjectsInMemory: sdk.Bool(false),
				Group:                   group,
			},
			owned("quotas", "ResourceQuota"),
			owned("limitranges", "LimitRange"),
		},
	}
}

// values is the module's values section; schema defaults fill every field.
type values struct {
	Quota struct {
		RequestsCPU    string `json:"requestsCPU"`
		RequestsMemory string `json:"requestsMemory"`
		LimitsCPU      string `json:"limitsCPU"`
		LimitsMemory   string `json:"limitsMemory"`
		Pods           *int   `json:"pods"`
	} `json:"quota"`
	LimitRange struct {
		DefaultRequestCPU    string `json:"defaultRequestCPU"`
		DefaultRequestMemory string `json:"defaultRequestMemory"`
		DefaultLimitCPU      string `json:"defaultLimitCPU"`
		DefaultLimitMemory   string `json:"defaultLimitMemory"`
	} `json:"limitRange"`
}

// check names the first missing value; the schema's defaults fill them
// all, so a missing one means the values did not go through the schema.
func (v *values) check() error {
	for _, f := range []struct{ key, value string }{
		{"quota.requestsCPU", v.Quota.RequestsCPU}, {"quota.requestsMemory", v.Quota.RequestsMemory},
		{"quota.limitsCPU", v.Quota.LimitsCPU}, {"quota.limitsMemory", v.Quota.LimitsMemory},
		{"limitRange.defaultRequestCPU", v.LimitRange.DefaultRequestCPU},
		{"limitRange.defaultRequestMemory", v.LimitRange.DefaultRequestMemory},
		{"limitRange.defaultLimitCPU", v.LimitRange.DefaultLimitCPU},
		{"limitRange.defaultLimitMemory", v.LimitRange.DefaultLimitMemory},
	} {
		if f.value == "" {
			return fmt.Errorf("no value .%s.%s", moduleKey, f.key)
		}
	}
	if v.Quota.Pods == nil {
		return fmt.Errorf("no value .%s.quota.pods", moduleKey)
	}
	return nil
}

func reconcile(_ context.Context, in *sdk.Input) error {
	var v values
	ok, err := in.Values.Decode(&v, moduleKey)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no values .%s", moduleKey)
	}
	if err := v.check(); err != nil {
		return err
	}
	wanted, err := namespaces(in, "namespaces")
	if err != nil {
		return err
	}
	quotas, err := namespaces(in, "quotas")
	if err != nil {
		return err
	}
	ranges, err := namespaces(in, "limitranges")
	if err != nil {
		return err
	}
	for _, ns := range wanted {
		in.Objects.CreateOrUpdate(quota(ns, &v))
		in.Objects.CreateOrUpdate(limitRange(ns, &v))
	}
	removed := 0
	for _, ns := range union(quotas, ranges) {
		if slices.Contains(wanted, ns) {
			continue
		}
		for _, kind := range []string{"ResourceQuota", "LimitRange"} {
			in.Objects.DeleteInBackground(sdk.ObjectRef{
				APIVersion: "v1", Kind: kind, Namespace: ns, Name: objectName, IgnoreMissing: true,
			})
		}
		removed++
	}
	fmt.Fprintf(os.Stderr, "namespace-defaults: applied to %d namespace(s), removed from %d\n", len(wanted), removed)
	return nil
}

// namespaces returns the namespace names in the snapshot of binding,
// sorted and unique.
func namespaces(in *sdk.Input, binding string) ([]string, error) {
	var out []string
	for _, o := range in.Snapshot(binding) {
		if len(o.FilterResult) == 0 {
			continue
		}
		var ns string
		if err := o.DecodeFilterResult(&ns); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", binding, err)
		}
		out = append(out, ns)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

func metadata(ns string) map[string]any {
	return map[string]any{
		"name": objectName, "namespace": ns,
		"labels": map[string]string{
			"addon-operator.io/managed-by": "addon-operator",
			"addon-operator.io/module":     objectName,
		},
	}
}

func quota(ns string, v *values) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "ResourceQuota", "metadata": metadata(ns),
		"spec": map[string]any{"hard": map[string]string{
			"requests.cpu": v.Quota.RequestsCPU, "requests.memory": v.Quota.RequestsMemory,
			"limits.cpu": v.Quota.LimitsCPU, "limits.memory": v.Quota.LimitsMemory,
			"pods": fmt.Sprint(*v.Quota.Pods),
		}},
	}
}

func limitRange(ns string, v *values) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "LimitRange", "metadata": metadata(ns),
		"spec": map[string]any{"limits": []any{map[string]any{
			"type":           "Container",
			"defaultRequest": map[string]string{"cpu": v.LimitRange.DefaultRequestCPU, "memory": v.LimitRange.DefaultRequestMemory},
			"default":        map[string]string{"cpu": v.LimitRange.DefaultLimitCPU, "memory": v.LimitRange.DefaultLimitMemory},
		}}},
	}
}
