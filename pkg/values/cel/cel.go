// Package cel compiles and evaluates the CEL validation rules of a settings
// schema: x-deckhouse-validations (a list of {expression, message}) and
// x-kubernetes-validations (a list of {rule, message, fieldPath}), with the
// semantics of Kubernetes' CRD validation rules. At each schema node that
// carries rules, `self` is the value at that node; a rule that names
// `oldSelf` is a transition rule, evaluated only where a previous value
// exists at the same path.
package cel

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"
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
type Rules struct{ root *node }

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
	return &Rules{root: root}, nil
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
	prog, err := env.Program(ast, cel.CostLimit(costLimit), cel.InterruptCheckFrequency(100))
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
	var out []Violation
	r.root.validate(key, value, old, old != nil, &out)
	slices.SortStableFunc(out, func(a, b Violation) int { return strings.Compare(a.Path, b.Path) })
	return out
}

func (n *node) validate(path string, value, old any, hasOld bool, out *[]Violation) {
	if n == nil || !n.hasRules {
		return
	}
	if len(n.rules) > 0 {
		self, oldSelf := n.convert(value), n.convert(old)
		for i := range n.rules {
			if v, failed := n.rules[i].eval(path, self, oldSelf, hasOld); failed {
				*out = append(*out, v)
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
			child.validate(joinKey(path, k), v[k], ov, hasOld && has, out)
		}
	case []any:
		// List items have no identity to correlate with the old list:
		// transition rules below a list are not evaluated, as for
		// Kubernetes' atomic lists.
		for i, item := range v {
			n.items.validate(path+"["+strconv.Itoa(i)+"]", item, nil, false, out)
		}
	}
}

func (r *rule) eval(path string, self, oldSelf any, hasOld bool) (Violation, bool) {
	if r.transition && !hasOld {
		return Violation{}, false
	}
	at := path
	if r.fieldPath != "" {
		at = path + "." + strings.TrimPrefix(r.fieldPath, ".")
	}
	vars := map[string]any{"self": self}
	if hasOld {
		vars["oldSelf"] = oldSelf
	}
	res, _, err := r.prog.Eval(vars)
	if err != nil {
		if r.lenientMissing && strings.Contains(err.Error(), "no such key") {
			return Violation{}, false
		}
		return Violation{Path: at, Message: fmt.Sprintf("%s (rule %q could not be evaluated: %v)", r.message, r.expr, err)}, true
	}
	pass, ok := res.Value().(bool)
	if !ok {
		return Violation{Path: at, Message: fmt.Sprintf("%s (rule %q did not evaluate to a boolean)", r.message, r.expr)}, true
	}
	if pass {
		return Violation{}, false
	}
	return Violation{Path: at, Message: r.message}, true
}

// convert turns the JSON numbers of integer schema nodes into int64, so
// that rules compare and compute with integers as they do for Kubernetes
// objects.
func (n *node) convert(value any) any {
	if n == nil {
		return value
	}
	switch v := value.(type) {
	case float64:
		if n.typ == "integer" && v == float64(int64(v)) {
			return int64(v)
		}
	case map[string]any:
		if n.properties == nil && n.additional == nil {
			return v
		}
		out := make(map[string]any, len(v))
		for k, item := range v {
			child := n.properties[k]
			if child == nil {
				child = n.additional
			}
			out[k] = child.convert(item)
		}
		return out
	case []any:
		if n.items == nil {
			return v
		}
		out := make([]any, len(v))
		for i, item := range v {
			out[i] = n.items.convert(item)
		}
		return out
	}
	return value
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
