package module

import (
	"errors"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// DefinitionRule is one rule of module.yaml's rbac: a PolicyRule its hooks
// need, granted in Namespaces ("" is the operator's namespace) or, with
// none, cluster-wide.
type DefinitionRule struct {
	rbacv1.PolicyRule `json:",inline"`
	Namespaces        []string `json:"namespaces,omitempty"`
}

// validateRules checks each rule names verbs and what they apply to.
func validateRules(rules []DefinitionRule) *DefinitionError {
	for i := range rules {
		r := &rules[i]
		field := fmt.Sprintf("rbac[%d]", i)
		switch {
		case len(r.Verbs) == 0:
			return &DefinitionError{Field: field + ".verbs", Err: errors.New("no verbs")}
		case len(r.NonResourceURLs) > 0 && (len(r.Resources) > 0 || len(r.APIGroups) > 0):
			return &DefinitionError{Field: field, Err: errors.New("nonResourceURLs and resources in one rule")}
		case len(r.NonResourceURLs) > 0 && len(r.Namespaces) > 0:
			return &DefinitionError{Field: field + ".namespaces", Err: errors.New("nonResourceURLs are cluster-wide")}
		case len(r.NonResourceURLs) == 0 && (len(r.Resources) == 0 || len(r.APIGroups) == 0):
			return &DefinitionError{Field: field, Err: errors.New("want apiGroups and resources, or nonResourceURLs")}
		}
		for _, ns := range r.Namespaces {
			if ns == "" {
				continue
			}
			if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
				return &DefinitionError{Field: field + ".namespaces", Err: fmt.Errorf("%q: %s", ns, strings.Join(errs, "; "))}
			}
		}
	}
	return nil
}
