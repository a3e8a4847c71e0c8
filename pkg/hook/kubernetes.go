package hook

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/addon-operator/addon-operator/pkg/jq"
)

// WatchEvent is a Kubernetes watch event type, as used in executeHookOnEvent
// and in the watchEvent field of a binding context.
type WatchEvent string

// Watch event types.
const (
	Added    WatchEvent = "Added"
	Modified WatchEvent = "Modified"
	Deleted  WatchEvent = "Deleted"
)

// defaultQueue is the queue of bindings that name none.
const defaultQueue = "main"

// KubernetesBinding subscribes a hook to changes of Kubernetes objects. After
// parsing, defaults are applied: Name is "kubernetes" when not given, Queue
// is "main", and the three boolean switches default to true.
type KubernetesBinding struct {
	Name       string `json:"name"`
	APIVersion string `json:"apiVersion,omitempty"`
	// Kind is a kind, plural or short resource name, resolved by discovery.
	Kind          string                `json:"kind"`
	NameSelector  *NameSelector         `json:"nameSelector,omitempty"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
	FieldSelector *FieldSelector        `json:"fieldSelector,omitempty"`
	// Namespace restricts the namespaces watched; nil means all namespaces.
	Namespace *NamespaceSelector `json:"namespace,omitempty"`
	// JqFilter has been compiled once with gojq to check its syntax.
	JqFilter string `json:"jqFilter,omitempty"`
	// ExecuteHookOnEvent lists the events that run the hook. Absent in the
	// configuration means all three; an empty list means none (a
	// snapshot-only binding). Never nil after parsing.
	ExecuteHookOnEvent           []WatchEvent `json:"executeHookOnEvent"`
	ExecuteHookOnSynchronization bool         `json:"executeHookOnSynchronization"`
	// WaitForSynchronization can only be switched off for a binding with an
	// explicit queue, as in the reference implementation; without one the
	// setting is ignored and stays true.
	WaitForSynchronization  bool `json:"waitForSynchronization"`
	KeepFullObjectsInMemory bool `json:"keepFullObjectsInMemory"`
	// IncludeSnapshotsFrom names kubernetes bindings of the same hook whose
	// snapshots go into this binding's contexts. Every kubernetes binding of
	// the same group is added to it.
	IncludeSnapshotsFrom []string `json:"includeSnapshotsFrom,omitempty"`
	Group                string   `json:"group,omitempty"`
	Queue                string   `json:"queue"`
	AllowFailure         bool     `json:"allowFailure"`
}

// ExecutesOn reports whether an event of type e runs the hook.
func (b *KubernetesBinding) ExecutesOn(e WatchEvent) bool {
	return slices.Contains(b.ExecuteHookOnEvent, e)
}

// NameSelector selects objects by name.
type NameSelector struct {
	MatchNames []string `json:"matchNames"`
}

// NamespaceSelector selects the namespaces whose objects are watched; at
// least one of its selectors is set.
type NamespaceSelector struct {
	NameSelector  *NameSelector         `json:"nameSelector,omitempty"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// FieldOperator is a field selector operator, normalized from the accepted
// spellings (=, ==, Equals; !=, NotEquals).
type FieldOperator string

// Field selector operators.
const (
	FieldEquals    FieldOperator = "="
	FieldNotEquals FieldOperator = "!="
)

// FieldRequirement is one field selector expression.
type FieldRequirement struct {
	Field    string        `json:"field"`
	Operator FieldOperator `json:"operator"`
	Value    string        `json:"value"`
}

// FieldSelector selects objects by fields; all expressions must match.
type FieldSelector struct {
	MatchExpressions []FieldRequirement `json:"matchExpressions"`
}

// Selector returns the expressions as an API field selector.
func (s *FieldSelector) Selector() fields.Selector {
	sel := make([]fields.Selector, 0, len(s.MatchExpressions))
	for _, r := range s.MatchExpressions {
		if r.Operator == FieldNotEquals {
			sel = append(sel, fields.OneTermNotEqualSelector(r.Field, r.Value))
		} else {
			sel = append(sel, fields.OneTermEqualSelector(r.Field, r.Value))
		}
	}
	return fields.AndSelectors(sel...)
}

func (p *parser) kubernetes(o *object) KubernetesBinding {
	b := KubernetesBinding{
		Name:                 o.str("name"),
		APIVersion:           o.str("apiVersion"),
		Kind:                 o.str("kind"),
		JqFilter:             o.str("jqFilter"),
		ExecuteHookOnEvent:   p.events(o),
		Group:                o.str("group"),
		Queue:                o.str("queue"),
		AllowFailure:         o.boolean("allowFailure", false),
		IncludeSnapshotsFrom: o.stringList("includeSnapshotsFrom"),

		ExecuteHookOnSynchronization: o.boolean("executeHookOnSynchronization", true),
		WaitForSynchronization:       o.boolean("waitForSynchronization", true),
		KeepFullObjectsInMemory:      o.boolean("keepFullObjectsInMemory", true),
	}
	// Accepted by the reference schema and never used there either.
	o.str("resynchronizationPeriod")
	if b.Name == "" {
		b.Name = string(Kubernetes)
	}
	if b.Queue == "" {
		b.Queue = defaultQueue
		b.WaitForSynchronization = true
	}
	if b.Kind == "" {
		p.errorf(o.field("kind"), "required")
	}
	if b.APIVersion != "" {
		if _, err := schema.ParseGroupVersion(b.APIVersion); err != nil {
			p.errorf(o.field("apiVersion"), "invalid %q: %v", b.APIVersion, err)
		}
	}
	if b.JqFilter != "" {
		if _, err := jq.Compile(b.JqFilter); err != nil {
			p.errorf(o.field("jqFilter"), "invalid jq filter %q: %v", b.JqFilter, err)
		}
	}
	p.selectors(o, &b)
	o.done()
	return b
}

// events reads executeHookOnEvent, also accepting its old name watchEvent.
func (p *parser) events(o *object) []WatchEvent {
	key := "executeHookOnEvent"
	if o.has("watchEvent") {
		if o.has(key) {
			p.errorf(o.field("watchEvent"), "set together with executeHookOnEvent (watchEvent is its old name; keep one)")
		} else {
			key = "watchEvent"
		}
	}
	o.get("watchEvent")
	items, present := o.list(key)
	if !present {
		return []WatchEvent{Added, Modified, Deleted}
	}
	events := make([]WatchEvent, 0, len(items))
	for i, item := range items {
		name, _ := item.(string)
		switch e := WatchEvent(name); e {
		case Added, Modified, Deleted:
			events = append(events, e)
		default:
			p.errorf(itemPath(o.field(key), i), "unknown event %s (want Added, Modified, Deleted)", quoteOrDescribe(item))
		}
	}
	return events
}

func (p *parser) selectors(o *object, b *KubernetesBinding) {
	b.NameSelector = p.nameSelector(o, "nameSelector")
	if c := o.child("labelSelector"); c != nil {
		b.LabelSelector = p.labelSelector(c)
	}
	if c := o.child("fieldSelector"); c != nil {
		b.FieldSelector = p.fieldSelector(c)
	}
	if c := o.child("namespace"); c != nil {
		b.Namespace = p.namespace(c)
	}
	if b.NameSelector == nil || len(b.NameSelector.MatchNames) == 0 || b.FieldSelector == nil {
		return
	}
	for i, r := range b.FieldSelector.MatchExpressions {
		if r.Field == "metadata.name" {
			p.errorf(itemPath(o.field("fieldSelector.matchExpressions"), i),
				"field metadata.name cannot be combined with nameSelector.matchNames")
		}
	}
}

// nameSelector reads {matchNames: [...]} or, as in the protocol document's
// own example, a bare list of names.
func (p *parser) nameSelector(parent *object, key string) *NameSelector {
	v, ok := parent.get(key)
	if !ok {
		return nil
	}
	if _, isList := v.([]any); isList {
		return &NameSelector{MatchNames: parent.stringList(key)}
	}
	o := p.object(parent.field(key), v)
	if o == nil {
		return nil
	}
	if !o.has("matchNames") {
		p.errorf(o.field("matchNames"), "required")
	}
	s := &NameSelector{MatchNames: o.stringList("matchNames")}
	o.done()
	return s
}

func (p *parser) labelSelector(o *object) *metav1.LabelSelector {
	sel := &metav1.LabelSelector{}
	if ml := o.child("matchLabels"); ml != nil {
		sel.MatchLabels = make(map[string]string, len(ml.m))
		for _, k := range sortedKeys(ml.m) {
			sel.MatchLabels[k] = ml.str(k)
		}
	}
	items, _ := o.list("matchExpressions")
	for i, item := range items {
		e := p.object(itemPath(o.field("matchExpressions"), i), item)
		if e == nil {
			continue
		}
		sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{
			Key:      e.str("key"),
			Operator: metav1.LabelSelectorOperator(e.str("operator")),
			Values:   e.stringList("values"),
		})
		e.done()
	}
	o.done()
	if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
		p.errorf(o.path, "empty selector (want matchLabels or matchExpressions)")
		return sel
	}
	if _, err := metav1.LabelSelectorAsSelector(sel); err != nil {
		p.errorf(o.path, "%v", err)
	}
	return sel
}

func (p *parser) fieldSelector(o *object) *FieldSelector {
	items, present := o.list("matchExpressions")
	if !present {
		p.errorf(o.field("matchExpressions"), "required")
	}
	sel := &FieldSelector{MatchExpressions: make([]FieldRequirement, 0, len(items))}
	for i, item := range items {
		e := p.object(itemPath(o.field("matchExpressions"), i), item)
		if e == nil {
			continue
		}
		r := FieldRequirement{Field: e.str("field"), Value: e.str("value")}
		switch op := e.str("operator"); op {
		case "=", "==", "Equals":
			r.Operator = FieldEquals
		case "!=", "NotEquals":
			r.Operator = FieldNotEquals
		default:
			p.errorf(e.field("operator"), "unknown operator %q (want =, ==, Equals, !=, NotEquals)", op)
		}
		if r.Field == "" {
			p.errorf(e.field("field"), "required")
		}
		e.done()
		sel.MatchExpressions = append(sel.MatchExpressions, r)
	}
	o.done()
	return sel
}

func (p *parser) namespace(o *object) *NamespaceSelector {
	ns := &NamespaceSelector{NameSelector: p.nameSelector(o, "nameSelector")}
	if c := o.child("labelSelector"); c != nil {
		ns.LabelSelector = p.labelSelector(c)
	}
	if ns.NameSelector == nil && ns.LabelSelector == nil {
		p.errorf(o.path, "empty (want nameSelector or labelSelector)")
	}
	o.done()
	return ns
}
