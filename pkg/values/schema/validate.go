package schema

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	oaerrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"

	"github.com/addon-operator/addon-operator/pkg/values"
	"github.com/addon-operator/addon-operator/pkg/values/cel"
)

// ValidationError reports every way one section's values break a schema.
type ValidationError struct {
	Kind       Kind        // which schema was broken
	File       string      // the schema file
	Violations []Violation // at least one; sorted by path, then message
}

// Error lists every violation on one line, for example
// `config values do not match schema m/openapi/config-values.yaml:
// certManager.issuer.name is required; certManager.replicas must be of
// type integer, got string`.
func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.String()
	}
	return fmt.Sprintf("%s do not match schema %s: %s", e.Kind, e.File, strings.Join(parts, "; "))
}

// Violation is one broken rule. Messages never quote values, which may be
// secret; they may quote the schema (enum lists, patterns, limits).
type Violation struct {
	// Path is the dotted key path rooted at the section key, with list
	// indices in brackets: "certManager.hosts[0].name".
	Path string
	// Message is the rule broken: "is required", "must be of type string,
	// got number", "must be one of [a b]", "is not allowed
	// (additionalProperties is false)", "must match '^[a-z]+$'", ...
	Message string
}

// String joins path and message: "certManager.issuer.name is required".
func (v Violation) String() string {
	if v.Path == "" {
		return v.Message
	}
	return v.Path + " " + v.Message
}

// ValidateConfig validates config values: the section's ConfigMap content
// merged with the config schema's defaults (see ApplyDefaults). key is the
// section's top key (a module key or "global"); paths in errors start with
// it. Without a config schema every section is valid.
func (s *Schemas) ValidateConfig(key string, section values.Values) error {
	return s.Validate(ConfigSchema, key, section)
}

// ValidateValues validates a section's effective values (every layer, hook
// patches included) against the values schema. key is as for
// ValidateConfig. A section with only a config schema is validated against
// it, its top level open to keys it does not declare; with neither schema
// every section is valid.
func (s *Schemas) ValidateValues(key string, section values.Values) error {
	return s.Validate(ValuesSchema, key, section)
}

// ValidateHelm validates a section's effective values right before a Helm
// run: the values schema with x-required-for-helm added. key is as for
// ValidateConfig.
func (s *Schemas) ValidateHelm(key string, section values.Values) error {
	return s.Validate(HelmSchema, key, section)
}

// Validate checks section, the content of the section key, against the
// schema of the given kind and returns nil, a *ValidationError listing
// every violation, or an error for a section that cannot be encoded as
// JSON. The section is validated as hooks and Helm see it: encoded as JSON,
// so every number is a float64 (1 is still an integer). Without that schema
// it returns nil. section is never changed.
//
// The schema's CEL rules (x-deckhouse-validations, x-kubernetes-validations)
// are checked too; transition rules, those that name oldSelf, need the
// previous values: see ValidateTransition.
func (s *Schemas) Validate(kind Kind, key string, section values.Values) error {
	return s.ValidateTransition(kind, key, section, nil)
}

// ValidateTransition is Validate with the section's previous values, old,
// for the transition rules (those that name oldSelf); with old nil they
// are skipped, as the API server skips them on create.
func (s *Schemas) ValidateTransition(kind Kind, key string, section, old values.Values) error {
	sc := s.get(kind)
	if sc == nil {
		return nil
	}
	data, err := jsonTree(section)
	if err != nil {
		return fmt.Errorf("validate %s: %w", kind, err)
	}
	res := validate.NewSchemaValidator(sc.spec, nil, key, strfmt.Default).Validate(data)
	var violations []Violation
	if !res.IsValid() {
		violations = violationsOf(res.Errors)
		if len(violations) == 0 {
			violations = []Violation{{Path: key, Message: "is not valid"}}
		}
	}
	ruleViolations, err := sc.checkRules(key, data, old)
	if err != nil {
		return fmt.Errorf("validate %s: %w", kind, err)
	}
	violations = append(violations, ruleViolations...)
	if len(violations) == 0 {
		return nil
	}
	return &ValidationError{Kind: kind, File: sc.file, Violations: violations}
}

// HasTransitionRules reports whether the schema of a kind has CEL rules
// that name oldSelf.
func (s *Schemas) HasTransitionRules(kind Kind) bool {
	sc := s.get(kind)
	return sc != nil && sc.rules.HasTransitions()
}

// checkRules evaluates the schema's CEL rules; old nil skips transition
// rules.
func (sc *schema) checkRules(key string, data map[string]any, old values.Values) ([]Violation, error) {
	if sc.rules == nil {
		return nil, nil
	}
	var oldTree any
	if old != nil {
		t, err := jsonTree(old)
		if err != nil {
			return nil, err
		}
		oldTree = t
	}
	var out []Violation
	for _, v := range sc.rules.Validate(key, data, oldTree) {
		out = append(out, Violation{Path: v.Path, Message: reasonPhrase(v.Reason) + v.Message})
	}
	return out, nil
}

// reasonPhrase starts a rule's message by its reason, as the API server's
// field errors do (Invalid value, Forbidden, Required value, Duplicate
// value).
func reasonPhrase(reason string) string {
	switch reason {
	case cel.ReasonForbidden:
		return "is forbidden: "
	case cel.ReasonRequired:
		return "is required: "
	case cel.ReasonDuplicate:
		return "has a duplicate value: "
	default:
		return "is invalid: "
	}
}

// jsonTree re-decodes section from JSON: the validator understands only
// plain maps, slices, float64, string, bool and nil.
func jsonTree(section values.Values) (map[string]any, error) {
	if section == nil {
		return map[string]any{}, nil
	}
	raw, err := json.Marshal(section)
	if err != nil {
		return nil, fmt.Errorf("encode values: %w", err)
	}
	var tree map[string]any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, fmt.Errorf("decode values: %w", err)
	}
	return tree, nil
}

// violationsOf turns validator errors into violations, flattened, sorted,
// without duplicates (the validator reports some patternProperties errors
// twice). A range check at a path that also has another violation is
// dropped: a fraction for an integer fails both the type and the range
// check.
func violationsOf(errs []error) []Violation {
	var out, ranges []Violation
	var collect func(errs []error)
	collect = func(errs []error) {
		for _, err := range errs {
			var composite *oaerrors.CompositeError
			var v *oaerrors.Validation
			switch {
			case errors.As(err, &composite):
				collect(composite.Errors)
			case errors.As(err, &v):
				out = append(out, violationOf(v))
			default:
				if pv, isRange := plainViolation(err.Error()); isRange {
					ranges = append(ranges, pv)
				} else {
					out = append(out, pv)
				}
			}
		}
	}
	collect(errs)
	reported := map[string]bool{}
	for _, v := range out {
		reported[v.Path] = true
	}
	for _, v := range ranges {
		if !reported[v.Path] {
			out = append(out, v)
		}
	}
	slices.SortFunc(out, func(a, b Violation) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Message, b.Message))
	})
	return slices.Compact(out)
}

// plainViolation splits the validator's unstructured messages, which name
// the path in one of two ways: `"<path>" must validate ... (oneOf)` for
// composition, `Checked value must be ... in <path>` for a number range
// check (isRange). Others are kept whole.
func plainViolation(msg string) (v Violation, isRange bool) {
	if rest, ok := strings.CutPrefix(msg, `"`); ok {
		if path, rule, ok := strings.Cut(rest, `" `); ok {
			return Violation{Path: strings.TrimPrefix(path, "."), Message: strings.TrimRight(rule, ". ")}, false
		}
	}
	if i := strings.LastIndex(msg, " in "); i >= 0 {
		if _, rule, ok := strings.Cut(msg[:i], " value "); ok {
			return Violation{Path: strings.TrimPrefix(msg[i+len(" in "):], "."), Message: rule}, true
		}
	}
	return Violation{Message: msg}, false
}

// violationOf rewords one validator error. The validator's messages read
// "<path> in body should ..."; ours read "<path> must ...".
func violationOf(v *oaerrors.Validation) Violation {
	path := strings.TrimPrefix(v.Name, ".")
	rule := strings.TrimPrefix(v.Error(), v.Name+" in "+v.In+" ")
	switch v.Code() {
	case oaerrors.RequiredFailCode:
		rule = "is required"
	case oaerrors.InvalidTypeCode:
		if got, ok := v.Value.(string); ok {
			rule = strings.TrimSuffix(rule, fmt.Sprintf(": %q", got)) + ", got " + got
		}
	case oaerrors.EnumFailCode:
		rule = fmt.Sprintf("must be one of %v", v.Values)
	case oaerrors.UnallowedPropertyCode:
		path = strings.TrimPrefix(fmt.Sprintf("%s.%v", v.Name, v.Value), ".")
		rule = "is not allowed (additionalProperties is false)"
	default:
		if rest, ok := strings.CutPrefix(rule, "shouldn't "); ok {
			rule = "must not " + rest
		} else if rest, ok := strings.CutPrefix(rule, "should "); ok {
			rule = "must " + rest
		}
	}
	return Violation{Path: path, Message: rule}
}
