// Package cel compiles and evaluates the CEL validation rules of a settings
// schema: x-deckhouse-validations (a list of {expression, message}) and
// x-kubernetes-validations (a list of {rule, message, fieldPath}), with the
// semantics of Kubernetes' CRD validation rules. At each schema node that
// carries rules, `self` is the value at that node; a rule that names
// `oldSelf` is a transition rule, evaluated only where a previous value
// exists at the same path.
package cel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/ext"
)

// Extension keys that carry rules.
const (
	DeckhouseKey  = "x-deckhouse-validations"
	KubernetesKey = "x-kubernetes-validations"
)

// costLimit bounds one rule's evaluation, as the API server's per-rule
// limit does, so that a rule over a long list cannot stall admission.
const costLimit = 1_000_000

// ValidationBudget bounds the cost of all rules of one Validate call, as
// the API server's per-object budget does: a rule at a list's items runs
// once per item, so without it a long list would multiply the per-rule
// limit. Once spent, the remaining rules are not evaluated and the value
// is refused with a violation that says so.
const ValidationBudget = 10_000_000

// ValidationTimeLimit bounds the time of one Validate call: cost units
// are estimates, and rules over large JSON values cost more time per unit
// here than in the API server, so a value within the cost budget could
// still hold an admission request past its webhook's timeout (5 s).
const ValidationTimeLimit = 2 * time.Second

// rule is one compiled rule.
type rule struct {
	expr       string
	message    string
	fieldPath  string // appended to the node's path in violations
	prog       cel.Program
	transition bool // names oldSelf
	// lenientMissing: x-deckhouse-validations pass a rule whose
	// evaluation hits a missing key, as Deckhouse does.
	lenientMissing bool
}

// node is one schema node: its rules, its type (for integers) and the
// schemas below it.
type node struct {
	rules      []rule
	typ        string
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
// at the section key, list indices in brackets; Message is the rule's
// message.
type Violation struct {
	Path    string
	Message string
}

// Compile collects and compiles the rules of a schema document (as JSON
// decodes it), through properties, additionalProperties and items. It
// returns nil when the document has no rules; an error names the schema
// path, the extension and the rule's index.
func Compile(doc map[string]any) (*Rules, error) {
	env, err := newEnv()
	if err != nil {
		return nil, err
	}
	root, err := compileNode(env, doc, "")
	if err != nil {
		return nil, err
	}
	if root == nil || !root.hasRules {
		return nil, nil
	}
	return &Rules{root: root, budget: ValidationBudget, timeLimit: ValidationTimeLimit}, nil
}

func newEnv() (*cel.Env, error) {
	env, err := cel.NewEnv(
		cel.Variable("self", cel.DynType),
		cel.Variable("oldSelf", cel.DynType),
		cel.CrossTypeNumericComparisons(true),
		cel.OptionalTypes(),
		ext.Strings(), ext.Sets(), ext.Lists(), ext.Math(),
	)
	if err != nil {
		return nil, fmt.Errorf("cel environment: %w", err)
	}
	return env, nil
}

func compileNode(env *cel.Env, doc map[string]any, at string) (*node, error) {
	if doc == nil {
		return nil, nil
	}
	n := &node{}
	n.typ, _ = doc["type"].(string)
	for _, key := range []string{DeckhouseKey, KubernetesKey} {
		raw, ok := doc[key]
		if !ok {
			continue
		}
		rules, err := compileRules(env, key, raw)
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
			child, err := compileNode(env, sub, at+".properties."+name)
			if err != nil {
				return nil, err
			}
			if child != nil {
				n.properties[name] = child
				n.hasRules = n.hasRules || child.hasRules
			}
		}
	}
	var err error
	if sub, ok := doc["additionalProperties"].(map[string]any); ok {
		if n.additional, err = compileNode(env, sub, at+".additionalProperties"); err != nil {
			return nil, err
		}
		n.hasRules = n.hasRules || (n.additional != nil && n.additional.hasRules)
	}
	if sub, ok := doc["items"].(map[string]any); ok {
		if n.items, err = compileNode(env, sub, at+".items"); err != nil {
			return nil, err
		}
		n.hasRules = n.hasRules || (n.items != nil && n.items.hasRules)
	}
	return n, nil
}

func schemaAt(at string) string {
	if at == "" {
		return ""
	}
	return strings.TrimPrefix(at, ".") + ": "
}

// compileRules reads and compiles one extension's list of rules.
func compileRules(env *cel.Env, key string, raw any) ([]rule, error) {
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%s is %T, want a list of rules", key, raw)
	}
	out := make([]rule, 0, len(list))
	for i, entry := range list {
		r, err := readRule(key, entry)
		if err == nil {
			err = r.compile(env)
		}
		if err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", key, i, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// readRule reads one entry: {expression, message} for Deckhouse's
// extension, {rule, message, fieldPath} for Kubernetes'.
func readRule(key string, entry any) (rule, error) {
	m, ok := entry.(map[string]any)
	if !ok {
		return rule{}, fmt.Errorf("rule is %T, want a map", entry)
	}
	str := func(field string) (string, error) {
		v, has := m[field]
		if !has || v == nil {
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s is %T, want a string", field, v)
		}
		return s, nil
	}
	exprField := "rule"
	if key == DeckhouseKey {
		exprField = "expression"
	}
	var r rule
	var err error
	if r.expr, err = str(exprField); err != nil {
		return rule{}, err
	}
	if r.message, err = str("message"); err != nil {
		return rule{}, err
	}
	if r.fieldPath, err = str("fieldPath"); err != nil {
		return rule{}, err
	}
	if strings.TrimSpace(r.expr) == "" {
		return rule{}, fmt.Errorf("%s is missing", exprField)
	}
	switch {
	case key == DeckhouseKey && r.message == "":
		return rule{}, errors.New("message is missing")
	case r.message == "":
		r.message = "failed rule: " + r.expr
	}
	r.lenientMissing = key == DeckhouseKey
	return r, nil
}

func (r *rule) compile(env *cel.Env) error {
	ast, iss := env.Compile(r.expr)
	if iss.Err() != nil {
		return fmt.Errorf("compile %q: %w", r.expr, iss.Err())
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return fmt.Errorf("%q evaluates to %s, want bool", r.expr, t)
	}
	for _, ref := range ast.NativeRep().ReferenceMap() {
		if ref.Name == "oldSelf" {
			r.transition = true
		}
	}
	prog, err := env.Program(ast, cel.CostLimit(costLimit), cel.InterruptCheckFrequency(100), cel.EvalOptions(cel.OptTrackCost))
	if err != nil {
		return fmt.Errorf("program %q: %w", r.expr, err)
	}
	r.prog = prog
	return nil
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
		for _, rl := range n.rules {
			if rl.transition {
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
		// List items have no identity to correlate with the old list:
		// transition rules below a list are not evaluated, as for
		// Kubernetes' atomic lists.
		for i, item := range v {
			n.items.validate(path+"["+strconv.Itoa(i)+"]", item, nil, false, run)
		}
	}
}

// eval evaluates the rule; cost is what the evaluation cost (the whole
// per-rule limit when it was exceeded).
func (r *rule) eval(ctx context.Context, path string, self, oldSelf any, hasOld bool) (v Violation, failed bool, cost uint64) {
	if r.transition && !hasOld {
		return Violation{}, false, 0
	}
	at := path
	if r.fieldPath != "" {
		at = path + "." + strings.TrimPrefix(r.fieldPath, ".")
	}
	vars := map[string]any{"self": self}
	if hasOld {
		vars["oldSelf"] = oldSelf
	}
	res, details, err := r.prog.ContextEval(ctx, vars)
	cost = costLimit
	if details != nil && details.ActualCost() != nil {
		cost = *details.ActualCost()
	}
	if err != nil {
		if r.lenientMissing && strings.Contains(err.Error(), "no such key") {
			return Violation{}, false, cost
		}
		return Violation{Path: at, Message: fmt.Sprintf("%s (rule %q could not be evaluated: %v)", r.message, r.expr, err)}, true, cost
	}
	pass, ok := res.Value().(bool)
	if !ok {
		return Violation{Path: at, Message: fmt.Sprintf("%s (rule %q did not evaluate to a boolean)", r.message, r.expr)}, true, cost
	}
	if pass {
		return Violation{}, false, cost
	}
	return Violation{Path: at, Message: r.message}, true, cost
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
