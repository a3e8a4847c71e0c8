package cel

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Reasons a rule may give, as the API server's x-kubernetes-validations
// take them; a violation without one is FieldValueInvalid.
const (
	ReasonInvalid   = "FieldValueInvalid"
	ReasonForbidden = "FieldValueForbidden"
	ReasonRequired  = "FieldValueRequired"
	ReasonDuplicate = "FieldValueDuplicate"
)

// rule is one compiled rule.
type rule struct {
	expr       string
	message    string
	reason     string
	fieldPath  string // normalized, appended to the node's path in violations
	prog       cel.Program
	transition bool // names oldSelf
	// optionalOld: oldSelf is an optional, and the rule runs also where
	// there is no previous value.
	optionalOld bool
	// messageExpr computes the message of a failed rule; nil when the rule
	// has none, or when the rule's place holds sensitive values the message
	// could quote.
	messageExpr    cel.Program
	messageExprSrc string
	// lenientMissing: x-deckhouse-validations pass a rule whose
	// evaluation hits a missing key, as Deckhouse does.
	lenientMissing bool
}

// ruleFields are the fields a rule may have, by extension; any other is
// refused rather than ignored.
func ruleFields(key string) []string {
	exprField := "rule"
	if key == DeckhouseKey {
		exprField = "expression"
	}
	return []string{exprField, "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf"}
}

// readRule reads one entry: {expression, message} for Deckhouse's
// extension, {rule, message} for Kubernetes', both with Kubernetes'
// optional messageExpression, reason, fieldPath and optionalOldSelf.
func readRule(key string, entry any) (rule, error) {
	m, ok := entry.(map[string]any)
	if !ok {
		return rule{}, fmt.Errorf("rule is %T, want a map", entry)
	}
	fields := ruleFields(key)
	for _, f := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(fields, f) {
			return rule{}, fmt.Errorf("unknown field %q (a rule has %s)", f, strings.Join(fields, ", "))
		}
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
	var r rule
	var err error
	for _, f := range []struct {
		name string
		dst  *string
	}{{fields[0], &r.expr}, {"message", &r.message}, {"messageExpression", &r.messageExprSrc}, {"reason", &r.reason}, {"fieldPath", &r.fieldPath}} {
		if *f.dst, err = str(f.name); err != nil {
			return rule{}, err
		}
	}
	if v, has := m["optionalOldSelf"]; has && v != nil {
		if r.optionalOld, ok = v.(bool); !ok {
			return rule{}, fmt.Errorf("optionalOldSelf is %T, want a boolean", v)
		}
	}
	if strings.TrimSpace(r.expr) == "" {
		return rule{}, fmt.Errorf("%s is missing", fields[0])
	}
	switch r.reason {
	case "":
		r.reason = ReasonInvalid
	case ReasonInvalid, ReasonForbidden, ReasonRequired, ReasonDuplicate:
	default:
		return rule{}, fmt.Errorf("reason %q is none of %s, %s, %s, %s", r.reason, ReasonInvalid, ReasonForbidden, ReasonRequired, ReasonDuplicate)
	}
	r.message = strings.TrimSpace(r.message)
	switch {
	case strings.ContainsAny(r.message, "\n"):
		return rule{}, errors.New("message contains a line break")
	case key == DeckhouseKey && r.message == "" && r.messageExprSrc == "":
		return rule{}, errors.New("message is missing")
	case r.message == "":
		r.message = "failed rule: " + strings.TrimSpace(r.expr)
	}
	r.lenientMissing = key == DeckhouseKey
	return r, nil
}

// compile compiles the rule and its message expression; sensitive means
// the rule's place holds values marked sensitive, and the message
// expression is then checked but not used.
func (r *rule) compile(e envs, sensitive bool) error {
	env := e.plain
	if r.optionalOld {
		env = e.optionalOld
	}
	ast, iss := env.Compile(r.expr)
	if iss.Err() != nil {
		return fmt.Errorf("compile %q: %w", r.expr, iss.Err())
	}
	if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
		return fmt.Errorf("%q evaluates to %s, want bool", r.expr, t)
	}
	for _, ref := range ast.NativeRep().ReferenceMap() {
		if ref.Name == oldSelfVar {
			r.transition = true
		}
	}
	prog, err := env.Program(ast, cel.CostLimit(costLimit), cel.InterruptCheckFrequency(celconfig.CheckFrequency))
	if err != nil {
		return fmt.Errorf("program %q: %w", r.expr, err)
	}
	r.prog = prog
	if r.messageExprSrc == "" {
		return nil
	}
	ast, iss = env.Compile(r.messageExprSrc)
	if iss.Err() != nil {
		return fmt.Errorf("compile messageExpression %q: %w", r.messageExprSrc, iss.Err())
	}
	if t := ast.OutputType(); !t.IsExactType(cel.StringType) && !t.IsExactType(cel.DynType) {
		return fmt.Errorf("messageExpression %q evaluates to %s, want string", r.messageExprSrc, t)
	}
	msg, err := env.Program(ast, cel.CostLimit(costLimit), cel.InterruptCheckFrequency(celconfig.CheckFrequency))
	if err != nil {
		return fmt.Errorf("program messageExpression %q: %w", r.messageExprSrc, err)
	}
	if !sensitive {
		r.messageExpr = msg
	}
	return nil
}

// eval evaluates the rule; cost is what the evaluation cost, the message
// expression's included (the whole per-rule limit when one was exceeded).
func (r *rule) eval(ctx context.Context, path string, self, oldSelf ref.Val, hasOld bool) (v Violation, failed bool, cost uint64) {
	if r.transition && !hasOld && !r.optionalOld {
		return Violation{}, false, 0
	}
	at := path
	if r.fieldPath != "" {
		at = joinKey(path, r.fieldPath)
	}
	vars := map[string]any{selfVar: self}
	switch {
	case r.optionalOld && hasOld:
		vars[oldSelfVar] = types.OptionalOf(oldSelf)
	case r.optionalOld:
		vars[oldSelfVar] = types.OptionalNone
	case hasOld:
		vars[oldSelfVar] = oldSelf
	}
	res, details, err := r.prog.ContextEval(ctx, vars)
	cost = actualCost(details)
	if err != nil {
		if r.lenientMissing && strings.Contains(err.Error(), "no such key") {
			return Violation{}, false, cost
		}
		return Violation{Path: at, Reason: r.reason, Message: fmt.Sprintf("%s (rule %q could not be evaluated: %v)", r.message, r.expr, err)}, true, cost
	}
	pass, ok := res.Value().(bool)
	if !ok {
		return Violation{Path: at, Reason: r.reason, Message: fmt.Sprintf("%s (rule %q did not evaluate to a boolean)", r.message, r.expr)}, true, cost
	}
	if pass {
		return Violation{}, false, cost
	}
	msg, msgCost := r.evalMessage(ctx, vars)
	return Violation{Path: at, Reason: r.reason, Message: msg}, true, cost + msgCost
}

// evalMessage computes a failed rule's message: the message expression's
// result when it gives a non-empty string of one line within the API
// server's size limit, the rule's message otherwise, as the API server
// falls back.
func (r *rule) evalMessage(ctx context.Context, vars map[string]any) (string, uint64) {
	if r.messageExpr == nil {
		return r.message, 0
	}
	res, details, err := r.messageExpr.ContextEval(ctx, vars)
	cost := actualCost(details)
	if err != nil {
		return r.message, cost
	}
	s, ok := res.Value().(string)
	s = strings.TrimSpace(s)
	if !ok || s == "" || strings.Contains(s, "\n") || len(s) > celconfig.MaxEvaluatedMessageExpressionSizeBytes {
		return r.message, cost
	}
	return s, cost
}

// actualCost is an evaluation's cost, the per-rule limit when it is not
// known (the limit was exceeded).
func actualCost(details *cel.EvalDetails) uint64 {
	if details != nil && details.ActualCost() != nil {
		return *details.ActualCost()
	}
	return costLimit
}
