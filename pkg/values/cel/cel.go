// Package cel compiles and evaluates the CEL validation rules of a settings
// schema: x-deckhouse-validations (a list of {expression, message}) and
// x-kubernetes-validations (a list of {rule, message, messageExpression,
// reason, fieldPath, optionalOldSelf}), with the semantics and the library
// of Kubernetes' CRD validation rules. At each schema node that carries
// rules, `self` is the value at that node; a rule that names `oldSelf` is a
// transition rule, evaluated only where a previous value exists at the
// same place: the same key of a map, the item with the same map keys of an
// x-kubernetes-list-type: map list. As in the API server, the items of
// set and atomic lists (a list without x-kubernetes-list-type is atomic)
// have no previous version: a rule that names oldSelf below them is
// refused when the schema is compiled, while one at the list itself sees
// the whole previous list.
package cel

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Extension keys that carry rules.
const (
	DeckhouseKey  = "x-deckhouse-validations"
	KubernetesKey = "x-kubernetes-validations"
)

// costLimit bounds one rule's evaluation, as the API server's per-rule
// limit does, so that a rule over a long list cannot stall admission.
const costLimit = celconfig.PerCallLimit

// ValidationBudget bounds the cost of all rules of one Validate call, as
// the API server's per-object budget does: a rule at a list's items runs
// once per item, so without it a long list would multiply the per-rule
// limit. Once spent, the remaining rules are not evaluated and the value
// is refused with a violation that says so.
const ValidationBudget = celconfig.RuntimeCELCostBudget

// ValidationTimeLimit bounds the time of one Validate call: cost units
// are estimates, and rules over large JSON values cost more time per unit
// here than in the API server, so a value within the cost budget could
// still hold an admission request past its webhook's timeout (5 s).
const ValidationTimeLimit = 2 * time.Second

// node is one schema node: its rules, its type (for integers), its list
// type (for correlating items with the previous list) and the schemas
// below it.
type node struct {
	rules      []rule
	typ        string
	listType   string
	mapKeys    []string // of a map list
	properties map[string]*node
	additional *node
	items      *node
	hasRules   bool // this node or one below has rules
}

// Rules are a schema's compiled rules. A nil *Rules has none.
type Rules struct {
	root *node
	// budget and timeLimit bound one Validate call: ValidationBudget and
	// ValidationTimeLimit unless a test sets them.
	budget    uint64
	timeLimit time.Duration
}

// Violation is one rule that failed: Path is the dotted key path rooted
// at the section key, list indices in brackets, the rule's fieldPath
// appended; Reason is the rule's reason (ReasonInvalid unless it gives
// another); Message is the rule's message, or what its messageExpression
// computed.
type Violation struct {
	Path    string
	Reason  string
	Message string
}

// Compile collects and compiles the rules of a schema document (as JSON
// decodes it), through properties, additionalProperties and items.
// sensitive reports whether a schema node or one below it marks values
// sensitive; the messageExpression of a rule at such a node is compiled
// but not used, so that it cannot quote a sensitive value into a message
// (nil: none is). It returns nil when the document has no rules; an error
// names the schema path, the extension and the rule's index.
func Compile(doc map[string]any, sensitive func(schema map[string]any) bool) (*Rules, error) {
	if sensitive == nil {
		sensitive = func(map[string]any) bool { return false }
	}
	c := &compiler{sensitive: sensitive}
	root, err := c.node(doc, "")
	if err != nil {
		return nil, err
	}
	if root == nil || !root.hasRules {
		return nil, nil
	}
	return &Rules{root: root, budget: ValidationBudget, timeLimit: ValidationTimeLimit}, nil
}

// compiler is the state of one Compile call.
type compiler struct {
	envs      *envs // built at the first rule: most schemas have none
	sensitive func(map[string]any) bool
	// uncorrelatable is the schema path of the outermost list above the
	// node being compiled whose items have no previous version (a set or
	// atomic list), "" when there is none: rules there may not name
	// oldSelf.
	uncorrelatable string
}

func (c *compiler) node(doc map[string]any, at string) (*node, error) {
	if doc == nil {
		return nil, nil
	}
	n := &node{}
	n.typ, _ = doc["type"].(string)
	var err error
	if n.listType, n.mapKeys, err = readListType(doc); err != nil {
		return nil, fmt.Errorf("%s%w", schemaAt(at), err)
	}
	for _, key := range []string{DeckhouseKey, KubernetesKey} {
		raw, ok := doc[key]
		if !ok {
			continue
		}
		rules, err := c.rules(doc, key, raw)
		if err != nil {
			return nil, fmt.Errorf("%s%w", schemaAt(at), err)
		}
		n.rules = append(n.rules, rules...)
	}
	n.hasRules = len(n.rules) > 0
	if props, ok := doc["properties"].(map[string]any); ok {
		n.properties = map[string]*node{}
		for _, name := range slices.Sorted(maps.Keys(props)) {
			sub, _ := props[name].(map[string]any)
			child, err := c.node(sub, at+".properties."+name)
			if err != nil {
				return nil, err
			}
			if child != nil {
				n.properties[name] = child
				n.hasRules = n.hasRules || child.hasRules
			}
		}
	}
	if sub, ok := doc["additionalProperties"].(map[string]any); ok {
		if n.additional, err = c.node(sub, at+".additionalProperties"); err != nil {
			return nil, err
		}
		n.hasRules = n.hasRules || (n.additional != nil && n.additional.hasRules)
	}
	if sub, ok := doc["items"].(map[string]any); ok {
		if n.items, err = c.items(sub, at, n.listType); err != nil {
			return nil, err
		}
		n.hasRules = n.hasRules || (n.items != nil && n.items.hasRules)
	}
	return n, nil
}

// items compiles the items schema of the list at at, whose
// x-kubernetes-list-type is listType: below a list that is not a map list
// (set, atomic, or none, which is atomic) the API server correlates no
// item with a previous one, and refuses rules that name oldSelf there.
func (c *compiler) items(sub map[string]any, at, listType string) (*node, error) {
	outer := c.uncorrelatable
	if listType != listMap && outer == "" {
		c.uncorrelatable = strings.TrimPrefix(at, ".")
		if c.uncorrelatable == "" {
			c.uncorrelatable = "the schema's root"
		}
	}
	defer func() { c.uncorrelatable = outer }()
	return c.node(sub, at+".items")
}

func schemaAt(at string) string {
	if at == "" {
		return ""
	}
	return strings.TrimPrefix(at, ".") + ": "
}

// rules reads and compiles one extension's list of rules at doc.
func (c *compiler) rules(doc map[string]any, key string, raw any) ([]rule, error) {
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%s is %T, want a list of rules", key, raw)
	}
	if c.envs == nil && len(list) > 0 {
		e, err := sharedEnvs()
		if err != nil {
			return nil, err
		}
		c.envs = &e
	}
	sensitive := c.sensitive(doc)
	out := make([]rule, 0, len(list))
	for i, entry := range list {
		r, err := readRule(key, entry)
		if err == nil && r.fieldPath != "" {
			r.fieldPath, err = normalizeFieldPath(doc, r.fieldPath)
		}
		if err == nil {
			err = r.compile(*c.envs, sensitive)
		}
		if err == nil && r.transition && c.uncorrelatable != "" {
			err = fmt.Errorf("oldSelf cannot be used on the uncorrelatable portion of the schema within %s: "+
				"items of a list that is not x-kubernetes-list-type: map have no previous version", c.uncorrelatable)
		}
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", key, i, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// HasTransitions reports whether some rule names oldSelf.
func (r *Rules) HasTransitions() bool {
	if r == nil {
		return false
	}
	var walk func(n *node) bool
	walk = func(n *node) bool {
		if n == nil || !n.hasRules {
			return false
		}
		for i := range n.rules {
			if n.rules[i].transition || n.rules[i].optionalOld {
				return true
			}
		}
		for _, c := range n.properties {
			if walk(c) {
				return true
			}
		}
		return walk(n.additional) || walk(n.items)
	}
	return walk(r.root)
}

// Validate evaluates every rule against value, a JSON tree (maps, lists,
// float64, string, bool, nil) rooted at the schema's top; old is the
// previous value, nil when there is none (transition rules are then
// skipped). key is the section key paths start with. Violations come in
// path order.
func (r *Rules) Validate(key string, value, old any) []Violation {
	if r == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.timeLimit)
	defer cancel()
	run := &validation{ctx: ctx, budget: r.budget, limits: r}
	r.root.validate(key, value, old, old != nil, run)
	out := run.out
	slices.SortStableFunc(out, func(a, b Violation) int { return strings.Compare(a.Path, b.Path) })
	if run.spentAt != "" {
		out = append(out, Violation{Path: run.spentAt, Message: "validation rules not evaluated from here on: " + run.spentWhy + "; make the value (its lists) smaller"})
	}
	return out
}

// validation is the state of one Validate call.
type validation struct {
	ctx      context.Context //nolint:containedctx // the deadline of one Validate call, passed down its walk
	out      []Violation
	budget   uint64
	spentAt  string // the path where the budget ran out
	spentWhy string
	limits   *Rules
}

// spend charges cost to the budget; false when the budget or the time is
// spent, and the walk stops at path.
func (run *validation) spend(path string, cost uint64) bool {
	switch {
	case run.ctx.Err() != nil:
		run.spentAt, run.spentWhy = path, fmt.Sprintf("their evaluation took longer than %s for one value", run.limits.timeLimit)
	case cost >= run.budget:
		run.spentAt, run.spentWhy = path, fmt.Sprintf("their cost exceeded the budget of %d for one value", run.limits.budget)
	default:
		run.budget -= cost
		return true
	}
	return false
}

func (n *node) validate(path string, value, old any, hasOld bool, run *validation) {
	if n == nil || !n.hasRules || run.spentAt != "" {
		return
	}
	if len(n.rules) > 0 {
		self, oldSelf := n.convert(value), n.convert(old)
		for i := range n.rules {
			v, failed, cost := n.rules[i].eval(run.ctx, path, self, oldSelf, hasOld)
			if !run.spend(path, cost) {
				return
			}
			if failed {
				run.out = append(run.out, v)
			}
		}
	}
	switch v := value.(type) {
	case map[string]any:
		oldMap, _ := old.(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(v)) {
			child := n.properties[k]
			if child == nil {
				child = n.additional
			}
			ov, has := oldMap[k]
			child.validate(joinKey(path, k), v[k], ov, hasOld && has, run)
		}
	case []any:
		// Only the items of a map list have an identity to correlate
		// with the previous list; elsewhere transition rules below a list
		// are not evaluated, as in the API server.
		var olds oldItems
		if oldList, ok := old.([]any); ok && hasOld && n.listType == listMap {
			olds = newOldItems(n.mapKeys, oldList)
		}
		for i, item := range v {
			ov, has := olds.get(item)
			n.items.validate(path+"["+strconv.Itoa(i)+"]", item, ov, has, run)
		}
	}
}

// convert turns a JSON tree into CEL values once, before any rule reads
// it: a rule over a list would otherwise convert each element again on
// every access. The numbers of integer schema nodes become CEL ints, so
// that rules compare and compute with integers as they do for Kubernetes
// objects.
func (n *node) convert(value any) ref.Val {
	switch v := value.(type) {
	case nil:
		return types.NullValue
	case bool:
		return types.Bool(v)
	case string:
		return types.String(v)
	case float64:
		if n != nil && n.typ == "integer" && v == float64(int64(v)) {
			return types.Int(int64(v))
		}
		return types.Double(v)
	case map[string]any:
		out := make(map[ref.Val]ref.Val, len(v))
		for k, item := range v {
			var child *node
			if n != nil {
				if child = n.properties[k]; child == nil {
					child = n.additional
				}
			}
			out[types.String(k)] = child.convert(item)
		}
		return types.NewRefValMap(types.DefaultTypeAdapter, out)
	case []any:
		var items *node
		if n != nil {
			items = n.items
		}
		out := make([]ref.Val, len(v))
		for i, item := range v {
			out[i] = items.convert(item)
		}
		return types.NewRefValList(types.DefaultTypeAdapter, out)
	}
	return types.DefaultTypeAdapter.NativeToValue(value)
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
