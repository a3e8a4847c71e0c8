package v1alpha1

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"
)

// crdValidator validates objects as the API server does with a CRD's
// schema: OpenAPI validation, then the x-kubernetes-validations rules.
type crdValidator struct {
	schema     validation.SchemaValidator
	structural *structuralschema.Structural
	rules      *cel.Validator
}

func newCRDValidator(t *testing.T, resource string) *crdValidator {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "modules", "060-execution-hooks", "crds", Group+"_"+resource+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, &internal, nil); err != nil {
		t.Fatal(err)
	}
	v, _, err := validation.NewSchemaValidator(&internal)
	if err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		t.Fatal(err)
	}
	return &crdValidator{schema: v, structural: s, rules: cel.NewValidator(s, true, celconfig.PerCallLimit)}
}

// validate returns the errors of obj, an update of old when old is not nil.
func (v *crdValidator) validate(t *testing.T, obj, old map[string]any) field.ErrorList {
	t.Helper()
	errs := validation.ValidateCustomResource(nil, obj, v.schema)
	var oldObj any
	if old != nil {
		oldObj = old
	}
	ruleErrs, _ := v.rules.Validate(t.Context(), nil, v.structural, obj, oldObj, celconfig.RuntimeCELCostBudget)
	return append(errs, ruleErrs...)
}

func object(t *testing.T, kind, body string) map[string]any {
	t.Helper()
	var obj map[string]any
	doc := "apiVersion: " + Group + "/" + Version + "\nkind: " + kind + "\nmetadata: {name: h, namespace: n}\n" + body
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestExecutionHookValidation checks the validation the markers put into
// the generated CRD, as the API server applies it.
func TestExecutionHookValidation(t *testing.T) {
	v := newCRDValidator(t, ExecutionHooksResource)
	const pre = "preAction: {exec: {command: [fsfreeze, -f, /data]}}\n"
	tests := map[string]struct {
		spec, oldSpec string
		want          string // a part of the only error; empty: valid
	}{
		"selector and action":   {spec: "podSelector: {matchLabels: {app: db}}\n" + pre},
		"pods and a template":   {spec: "podContainerNamesList: [{podName: db-0, containerNames: [mysql]}]\nexecutionHookTemplateName: freeze\n"},
		"no action":             {spec: "podSelector: {}\n", want: "set preAction or executionHookTemplateName"},
		"no selection":          {spec: pre, want: "select containers with podContainerNamesList or podSelector"},
		"unknown operator":      {spec: "podSelector: {matchExpressions: [{key: app, operator: Near}]}\n" + pre, want: "a matchExpressions operator is In, NotIn, Exists or DoesNotExist"},
		"known operator":        {spec: "podSelector: {matchExpressions: [{key: app, operator: Exists}]}\n" + pre},
		"unknown policy":        {spec: "podSelector: {}\npolicy: Sometimes\n" + pre, want: `Unsupported value: "Sometimes"`},
		"empty command":         {spec: "podSelector: {}\npreAction: {exec: {command: []}}\n", want: "spec.preAction.exec.command"},
		"zero timeout":          {spec: "podSelector: {}\npreAction: {exec: {command: [x]}, actionTimeoutSeconds: 0}\n", want: "spec.preAction.actionTimeoutSeconds"},
		"zero expiration":       {spec: "podSelector: {}\nexpirationSeconds: 0\n" + pre, want: "spec.expirationSeconds"},
		"no pods listed":        {spec: "podContainerNamesList: []\n" + pre, want: "spec.podContainerNamesList"},
		"empty pod name":        {spec: "podContainerNamesList: [{podName: ''}]\n" + pre, want: "spec.podContainerNamesList[0].podName"},
		"empty container name":  {spec: "podContainerNamesList: [{podName: db-0, containerNames: ['']}]\n" + pre, want: "spec.podContainerNamesList[0].containerNames[0]"},
		"preAction kept":        {spec: "podSelector: {}\n" + pre, oldSpec: "podSelector: {}\n" + pre},
		"preAction changed":     {spec: "podSelector: {}\npreAction: {exec: {command: [fsfreeze, -u, /data]}}\n", oldSpec: "podSelector: {}\n" + pre, want: "preAction is immutable once set"},
		"pods changed":          {spec: "podContainerNamesList: [{podName: db-1}]\n" + pre, oldSpec: "podContainerNamesList: [{podName: db-0}]\n" + pre, want: "podContainerNamesList is immutable"},
		"preAction set by hand": {spec: "podSelector: {}\nexecutionHookTemplateName: freeze\n" + pre, oldSpec: "podSelector: {}\nexecutionHookTemplateName: freeze\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			obj := object(t, "ExecutionHook", "spec:\n"+indent(tc.spec))
			var old map[string]any
			if tc.oldSpec != "" {
				old = object(t, "ExecutionHook", "spec:\n"+indent(tc.oldSpec))
			}
			check(t, v.validate(t, obj, old), tc.want)
		})
	}
}

// TestExecutionHookTemplateValidation checks that a template needs a
// preAction, which its CRD requires by a rule (the type is shared with
// ExecutionHook's spec, where it is optional).
func TestExecutionHookTemplateValidation(t *testing.T) {
	v := newCRDValidator(t, ExecutionHookTemplatesResource)
	tests := map[string]struct{ body, want string }{
		"preAction":    {body: "policy: ExecuteOnce\npreAction: {exec: {command: [x]}}\nexpirationSeconds: 60\n"},
		"no preAction": {body: "policy: ExecuteOnce\npostAction: {exec: {command: [x]}}\n", want: "preAction is required"},
		"bad policy":   {body: "policy: Never\npreAction: {exec: {command: [x]}}\n", want: `Unsupported value: "Never"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			check(t, v.validate(t, object(t, "ExecutionHookTemplate", tc.body), nil), tc.want)
		})
	}
}

func check(t *testing.T, errs field.ErrorList, want string) {
	t.Helper()
	switch {
	case want == "" && len(errs) > 0:
		t.Errorf("rejected: %v", errs)
	case want != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), want)):
		t.Errorf("errors %v, want one containing %q", errs, want)
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}
