package hook

import (
	"fmt"
	"slices"
	"strings"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Webhook binding types: each request of the API server runs the hook at
// once, outside the queues.
const (
	KubernetesValidating Binding = "kubernetesValidating"
	KubernetesMutating   Binding = "kubernetesMutating"
	KubernetesConversion Binding = "kubernetesCustomResourceConversion"
)

// Binding-context types of webhook runs.
const (
	TypeValidating ContextType = "Validating"
	TypeMutating   ContextType = "Mutating"
	TypeConversion ContextType = "Conversion"
)

// DefaultWebhookTimeoutSeconds is the timeoutSeconds of an admission
// binding that sets none, as in the protocol.
const DefaultWebhookTimeoutSeconds = 10

// AdmissionBinding is a kubernetesValidating or kubernetesMutating binding:
// one webhook entry of the operator's Validating- or
// MutatingWebhookConfiguration. Defaults are applied after parsing:
// SideEffects None, TimeoutSeconds 10; an empty FailurePolicy is the
// operator's default (--validating-webhook-failure-policy, Fail).
type AdmissionBinding struct {
	// Name is the webhook's name, a DNS name of at least three parts.
	Name  string                           `json:"name"`
	Rules []admissionv1.RuleWithOperations `json:"rules"`
	// ObjectSelector comes from labelSelector, NamespaceSelector from
	// namespace.labelSelector.
	ObjectSelector       *metav1.LabelSelector         `json:"objectSelector,omitempty"`
	NamespaceSelector    *metav1.LabelSelector         `json:"namespaceSelector,omitempty"`
	FailurePolicy        admissionv1.FailurePolicyType `json:"failurePolicy,omitempty"`
	SideEffects          admissionv1.SideEffectClass   `json:"sideEffects"`
	TimeoutSeconds       int32                         `json:"timeoutSeconds"`
	MatchConditions      []admissionv1.MatchCondition  `json:"matchConditions,omitempty"`
	IncludeSnapshotsFrom []string                      `json:"includeSnapshotsFrom,omitempty"`
	Group                string                        `json:"group,omitempty"`
}

// ConversionBinding is a kubernetesCustomResourceConversion binding: the
// hook converts objects of CRDName between the versions of Conversions.
type ConversionBinding struct {
	Name    string `json:"name"`
	CRDName string `json:"crdName"`
	// Conversions hold versions as written: "group/version" or a bare
	// version of the CRD's group.
	Conversions          []Conversion `json:"conversions"`
	IncludeSnapshotsFrom []string     `json:"includeSnapshotsFrom,omitempty"`
	Group                string       `json:"group,omitempty"`
}

// Conversion is one declared step from one version to another.
type Conversion struct {
	FromVersion string `json:"fromVersion"`
	ToVersion   string `json:"toVersion"`
}

// webhooks parses the three webhook binding lists into cfg.
func (p *parser) webhooks(root *object, cfg *Config) {
	for _, kind := range []Binding{KubernetesValidating, KubernetesMutating} {
		items, _ := root.list(string(kind))
		for i, item := range items {
			var b AdmissionBinding
			if o := p.object(itemPath(string(kind), i), item); o != nil {
				b = p.admission(o)
			}
			if kind == KubernetesValidating {
				cfg.Validating = append(cfg.Validating, b)
			} else {
				cfg.Mutating = append(cfg.Mutating, b)
			}
		}
	}
	items, _ := root.list(string(KubernetesConversion))
	for i, item := range items {
		var b ConversionBinding
		if o := p.object(itemPath(string(KubernetesConversion), i), item); o != nil {
			b = p.conversion(o)
		}
		cfg.Conversions = append(cfg.Conversions, b)
	}
	p.uniqueWebhookNames(cfg)
}

func (p *parser) admission(o *object) AdmissionBinding {
	b := AdmissionBinding{
		Name:                 o.str("name"),
		FailurePolicy:        admissionv1.FailurePolicyType(o.str("failurePolicy")),
		SideEffects:          admissionv1.SideEffectClass(o.str("sideEffects")),
		Group:                o.str("group"),
		IncludeSnapshotsFrom: o.stringList("includeSnapshotsFrom"),
		TimeoutSeconds:       DefaultWebhookTimeoutSeconds,
	}
	switch {
	case b.Name == "":
		p.errorf(o.field("name"), "required")
	case len(strings.Split(b.Name, ".")) < 3 || len(validation.IsDNS1123Subdomain(b.Name)) > 0:
		p.errorf(o.field("name"), "%q is not a DNS name of at least three parts (like \"check.example.com\")", b.Name)
	}
	if t, ok := o.integer("timeoutSeconds"); ok {
		if t < 1 || t > 30 {
			p.errorf(o.field("timeoutSeconds"), "%d out of range (want 1 to 30)", t)
		}
		b.TimeoutSeconds = int32(min(max(t, 1), 30))
	}
	switch b.FailurePolicy {
	case "", admissionv1.Fail, admissionv1.Ignore:
	default:
		p.errorf(o.field("failurePolicy"), "unknown policy %q (want Fail or Ignore)", b.FailurePolicy)
	}
	switch b.SideEffects {
	case "":
		b.SideEffects = admissionv1.SideEffectClassNone
	case admissionv1.SideEffectClassNone, admissionv1.SideEffectClassNoneOnDryRun:
	default:
		p.errorf(o.field("sideEffects"), "unknown value %q (want None or NoneOnDryRun)", b.SideEffects)
	}
	b.Rules = p.rules(o)
	if c := o.child("labelSelector"); c != nil {
		b.ObjectSelector = p.labelSelector(c)
	}
	if c := o.child("namespace"); c != nil {
		if ls := c.child("labelSelector"); ls != nil {
			b.NamespaceSelector = p.labelSelector(ls)
		}
		c.done()
	}
	b.MatchConditions = p.matchConditions(o)
	o.done()
	return b
}

func (p *parser) rules(o *object) []admissionv1.RuleWithOperations {
	items, present := o.list("rules")
	if !present || len(items) == 0 {
		p.errorf(o.field("rules"), "required (at least one rule)")
		return nil
	}
	rules := make([]admissionv1.RuleWithOperations, 0, len(items))
	for i, item := range items {
		r := p.object(itemPath(o.field("rules"), i), item)
		if r == nil {
			continue
		}
		rule := admissionv1.RuleWithOperations{Rule: admissionv1.Rule{
			APIGroups: r.stringList("apiGroups"), APIVersions: r.stringList("apiVersions"), Resources: r.stringList("resources"),
		}}
		for _, op := range r.stringList("operations") {
			rule.Operations = append(rule.Operations, admissionv1.OperationType(op))
		}
		if s := admissionv1.ScopeType(r.str("scope")); s != "" {
			rule.Scope = &s
			if !slices.Contains([]admissionv1.ScopeType{admissionv1.AllScopes, admissionv1.ClusterScope, admissionv1.NamespacedScope}, s) {
				p.errorf(r.field("scope"), "unknown scope %q (want *, Cluster or Namespaced)", s)
			}
		}
		for _, f := range []struct {
			key string
			n   int
		}{{"apiGroups", len(rule.APIGroups)}, {"apiVersions", len(rule.APIVersions)}, {"resources", len(rule.Resources)}, {"operations", len(rule.Operations)}} {
			if f.n == 0 {
				p.errorf(r.field(f.key), "required")
			}
		}
		r.done()
		rules = append(rules, rule)
	}
	return rules
}

func (p *parser) matchConditions(o *object) []admissionv1.MatchCondition {
	items, _ := o.list("matchConditions")
	var out []admissionv1.MatchCondition
	for i, item := range items {
		c := p.object(itemPath(o.field("matchConditions"), i), item)
		if c == nil {
			continue
		}
		mc := admissionv1.MatchCondition{Name: c.str("name"), Expression: c.str("expression")}
		if mc.Name == "" || mc.Expression == "" {
			p.errorf(c.path, "name and expression are required")
		}
		c.done()
		out = append(out, mc)
	}
	return out
}

func (p *parser) conversion(o *object) ConversionBinding {
	b := ConversionBinding{
		Name:                 o.str("name"),
		CRDName:              o.str("crdName"),
		Group:                o.str("group"),
		IncludeSnapshotsFrom: o.stringList("includeSnapshotsFrom"),
	}
	if b.Name == "" {
		b.Name = string(KubernetesConversion)
	}
	if b.CRDName == "" {
		p.errorf(o.field("crdName"), "required")
	} else if len(validation.IsDNS1123Subdomain(b.CRDName)) > 0 || !strings.Contains(b.CRDName, ".") {
		p.errorf(o.field("crdName"), "%q is not a CRD name (<plural>.<group>)", b.CRDName)
	}
	items, present := o.list("conversions")
	if !present || len(items) == 0 {
		p.errorf(o.field("conversions"), "required (at least one fromVersion/toVersion pair)")
	}
	for i, item := range items {
		c := p.object(itemPath(o.field("conversions"), i), item)
		if c == nil {
			continue
		}
		conv := Conversion{FromVersion: c.str("fromVersion"), ToVersion: c.str("toVersion")}
		if conv.FromVersion == "" || conv.ToVersion == "" {
			p.errorf(c.path, "fromVersion and toVersion are required")
		} else if conv.FromVersion == conv.ToVersion {
			p.errorf(c.path, "fromVersion and toVersion are both %q", conv.FromVersion)
		}
		c.done()
		b.Conversions = append(b.Conversions, conv)
	}
	o.done()
	return b
}

// uniqueWebhookNames reports two admission bindings of one hook with the
// same webhook name: the API server would refuse the configuration.
func (p *parser) uniqueWebhookNames(cfg *Config) {
	seen := map[string]bool{}
	for _, list := range []struct {
		key   Binding
		items []AdmissionBinding
	}{{KubernetesValidating, cfg.Validating}, {KubernetesMutating, cfg.Mutating}} {
		for i := range list.items {
			name := list.items[i].Name
			if name != "" && seen[string(list.key)+name] {
				p.errorf(fmt.Sprintf("%s[%d].name", list.key, i), "duplicate webhook name %q", name)
			}
			seen[string(list.key)+name] = true
		}
	}
}

// webhookSnapshotPaths lists the includeSnapshotsFrom of every webhook
// binding with its path, for checkSnapshots.
func (cfg *Config) webhookSnapshotPaths() map[string][]string {
	out := map[string][]string{}
	for i := range cfg.Validating {
		out[fmt.Sprintf("%s[%d].includeSnapshotsFrom", KubernetesValidating, i)] = cfg.Validating[i].IncludeSnapshotsFrom
	}
	for i := range cfg.Mutating {
		out[fmt.Sprintf("%s[%d].includeSnapshotsFrom", KubernetesMutating, i)] = cfg.Mutating[i].IncludeSnapshotsFrom
	}
	for i := range cfg.Conversions {
		out[fmt.Sprintf("%s[%d].includeSnapshotsFrom", KubernetesConversion, i)] = cfg.Conversions[i].IncludeSnapshotsFrom
	}
	return out
}

// expandWebhookGroups adds the kubernetes bindings of a webhook binding's
// group to its snapshots.
func expandWebhookGroups(cfg *Config, groups map[string][]string) {
	for i := range cfg.Validating {
		b := &cfg.Validating[i]
		b.IncludeSnapshotsFrom = mergeNames(b.IncludeSnapshotsFrom, groups[b.Group])
	}
	for i := range cfg.Mutating {
		b := &cfg.Mutating[i]
		b.IncludeSnapshotsFrom = mergeNames(b.IncludeSnapshotsFrom, groups[b.Group])
	}
	for i := range cfg.Conversions {
		b := &cfg.Conversions[i]
		b.IncludeSnapshotsFrom = mergeNames(b.IncludeSnapshotsFrom, groups[b.Group])
	}
}

// HasWebhooks reports whether the hook declares any webhook binding.
func (cfg *Config) HasWebhooks() bool {
	return len(cfg.Validating)+len(cfg.Mutating)+len(cfg.Conversions) > 0
}
