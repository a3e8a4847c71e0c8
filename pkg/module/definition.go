package module

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/pkg/filelimit"
)

// DefinitionFile is the optional file in a module's directory that
// declares its namespace, weight, requirements, description and version.
const DefinitionFile = "module.yaml"

// Definition is a module's module.yaml. Every field is optional; a module
// without the file has the zero Definition and behaves as one without
// module.yaml always did.
type Definition struct {
	// Name, when set, must be the module's name (its directory name
	// without the NNN- prefix).
	Name string `json:"name,omitempty"`
	// Weight orders the module like an NNN- prefix does; both may be
	// given only when they are equal.
	Weight *int `json:"weight,omitempty"`
	// Namespace is the namespace of the module's release: namespace-less
	// objects of its chart land there, and it is created when missing.
	Namespace string `json:"namespace,omitempty"`
	// Description and Version are shown by status pages and
	// `modules list`; Version is what other modules' requirements are
	// checked against.
	Description string `json:"description,omitempty"`
	Version     string `json:"version,omitempty"`
	// Requires maps the names of modules this one needs to be ready
	// before it runs to a version constraint ("" or "*": any version).
	Requires map[string]string `json:"requires,omitempty"`
	// RBAC declares what the module's hooks write through object patches
	// (KUBERNETES_PATCH_PATH), which cannot be read from the hooks:
	// `addon-operator rbac` adds these rules to what the chart deploys and
	// the hooks watch.
	RBAC []DefinitionRule `json:"rbac,omitempty"`
	// ReadinessTimeout bounds how long a run waits for the release's
	// objects to be ready; zero means the operator's default.
	ReadinessTimeout Duration `json:"readinessTimeout,omitempty"`
	// Remediation overrides the operator's --remediation and
	// --remediation-retries for this module.
	Remediation *DefinitionRemediation `json:"remediation,omitempty"`
	// Disable, with Confirmation, makes the operator's admission check
	// refuse a write that disables the module unless the written object
	// carries the allow-disabling annotation; Message is shown in the
	// refusal (Deckhouse's module.yaml disable section).
	Disable *DefinitionDisable `json:"disable,omitempty"`
	// ChartHookTimeout bounds how long an install or upgrade of the
	// module's release waits for each of its chart's Helm hooks (a hook
	// Job to complete); zero means --helm-timeout, which still bounds the
	// whole operation.
	ChartHookTimeout Duration `json:"chartHookTimeout,omitempty"`
	// UpgradeOnValuesChange is UpgradeAlways to upgrade the release on
	// every change of the module's values, running its chart's upgrade
	// hooks, even when the rendered manifests are the same; "" or
	// UpgradeWhenRenderedChanges (the default) skips such an upgrade.
	UpgradeOnValuesChange string `json:"upgradeOnValuesChange,omitempty"`

	// The fields below are those of Deckhouse's module.yaml.

	// Critical modules converge first: the other modules start once every
	// critical module finished its first attempt.
	Critical bool `json:"critical,omitempty"`
	// Stage, Tags, Subsystems and Descriptions (by language: en, ru, ...)
	// are shown by status pages, Module objects and `modules list`.
	Stage        string            `json:"stage,omitempty"`
	Tags         []string          `json:"tags,omitempty"`
	Subsystems   []string          `json:"subsystems,omitempty"`
	Descriptions map[string]string `json:"descriptions,omitempty"`
	// ExclusiveGroup names a group of which at most one module may be
	// enabled: admission refuses a configuration that enables a second,
	// and a converge keeps every one but the first (in module order)
	// disabled.
	ExclusiveGroup string `json:"exclusiveGroup,omitempty"`
	// Requirements are checked before the module runs: one that is not
	// met keeps it from running (it is not deleted), with the reason in
	// its status.
	Requirements *DefinitionRequirements `json:"requirements,omitempty"`
}

// Values of module.yaml's upgradeOnValuesChange.
const (
	UpgradeAlways              = "always"
	UpgradeWhenRenderedChanges = "whenRenderedChanges"
)

// UpgradesOnValuesChange reports whether the release is upgraded on every
// change of the values (upgradeOnValuesChange: always).
func (d *Definition) UpgradesOnValuesChange() bool {
	return d.UpgradeOnValuesChange == UpgradeAlways
}

// DefinitionRequirements is module.yaml's requirements (Deckhouse).
type DefinitionRequirements struct {
	// Kubernetes is a version constraint on the cluster's version.
	Kubernetes string `json:"kubernetes,omitempty"`
	// Modules maps modules to version constraints, as Requires does: the
	// two are one list of requirements.
	Modules map[string]string `json:"modules,omitempty"`
	// Deckhouse and Bootstrapped are Deckhouse's own conditions; they are
	// read and ignored, with a warning.
	Deckhouse    string          `json:"deckhouse,omitempty"`
	Bootstrapped json.RawMessage `json:"bootstrapped,omitempty"`
}

// DefinitionDisable is module.yaml's disable: whether disabling the module
// needs a confirmation, and what the refusal tells the user. Messages holds
// the message by language (Deckhouse's newer form); Message, when empty,
// is taken from Messages["en"].
type DefinitionDisable struct {
	Confirmation bool              `json:"confirmation,omitempty"`
	Message      string            `json:"message,omitempty"`
	Messages     map[string]string `json:"messages,omitempty"`
}

// ignoredField says why a field of Deckhouse's module.yaml that means
// nothing here is read and ignored with a warning; "" for other fields.
func ignoredField(name string) string {
	switch name {
	case "accessibility":
		return "edition availability is Deckhouse's"
	case "update":
		return "release update paths are Deckhouse's"
	}
	return ""
}

// maxDisableMessage bounds disable.message: it travels in admission
// responses, whose messages the API server shows in full.
const maxDisableMessage = 1024

// DefinitionRemediation is module.yaml's remediation: what to do with a
// release after Retries failed deployments in a row.
type DefinitionRemediation struct {
	Strategy string `json:"strategy,omitempty"`
	Retries  int    `json:"retries,omitempty"`
}

// Duration is a time.Duration written as "5m" in YAML.
type Duration struct{ time.Duration }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if len(b) < 2 || b[0] != '"' {
		return fmt.Errorf("duration %s: want a string such as \"5m\"", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	if v < 0 {
		return fmt.Errorf("duration %q is negative", s)
	}
	d.Duration = v
	return nil
}

// MarshalJSON writes a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// DefinitionError is a module.yaml that cannot be used; it names the file
// and the field.
type DefinitionError struct {
	Path  string // the module.yaml
	Field string // "" when the file as a whole is wrong
	Err   error
}

func (e *DefinitionError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s: field %s: %v", e.Path, e.Field, e.Err)
}

func (e *DefinitionError) Unwrap() error { return e.Err }

// readDefinition reads dir/module.yaml. A missing file yields nil. Bad
// YAML, a duplicate key or a value of the wrong type is an error naming
// the file and the key; a field the operator does not know is returned as
// a warning and ignored.
func readDefinition(dir, name string) (*Definition, []string, error) {
	path := filepath.Join(dir, DefinitionFile)
	data, err := filelimit.ReadFile(path, filelimit.Default)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, loopError(path, err) // *fs.PathError names the file
	}
	def := &Definition{}
	var warnings []string //nolint:prealloc // decodeDefinition makes it
	if len(bytes.TrimSpace(data)) > 0 {
		if warnings, err = decodeDefinition(data, def); err != nil {
			var de *DefinitionError
			if errors.As(err, &de) {
				de.Path = path
				return nil, nil, de
			}
			return nil, nil, &DefinitionError{Path: path, Err: err}
		}
	}
	if err := def.validate(name); err != nil {
		err.Path = path
		return nil, nil, err
	}
	def.translate()
	return def, append(warnings, def.ignoredWarnings()...), nil
}

// decodeDefinition decodes module.yaml's content into def and lists the
// fields it does not know.
func decodeDefinition(data []byte, def *Definition) ([]string, error) {
	raw, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return nil, err
	}
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		return nil, err
	}
	top, ok := tree.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("top level is %s, want a map", kindOf(tree))
	}
	if err := json.Unmarshal(raw, def); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return nil, &DefinitionError{Field: te.Field, Err: fmt.Errorf("want %s, got %s", te.Type, te.Value)}
		}
		var field string
		for _, k := range slices.Sorted(maps.Keys(top)) {
			if strings.Contains(err.Error(), k) || k == "readinessTimeout" && strings.Contains(err.Error(), "duration") {
				field = k
				break
			}
		}
		return nil, &DefinitionError{Field: field, Err: err}
	}
	var unknown []string
	unknownFields(top, reflect.TypeOf(*def), "", &unknown)
	warnings := make([]string, 0, len(unknown))
	for _, f := range unknown {
		warnings = append(warnings, fmt.Sprintf("%s: unknown field %q ignored", DefinitionFile, f))
	}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if why := ignoredField(k); why != "" {
			warnings = append(warnings, fmt.Sprintf("%s: %s ignored: %s", DefinitionFile, k, why))
		}
	}
	return warnings, nil
}

// unknownFields appends to out the keys of raw, by dotted path, that no
// json field of t names; the top-level fields ignoredField names are
// warned about by decodeDefinition.
func unknownFields(raw any, t reflect.Type, prefix string, out *[]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := raw.(map[string]any)
		if !ok {
			return
		}
		fields := map[string]reflect.Type{}
		jsonFields(t, fields)
		for _, k := range slices.Sorted(maps.Keys(m)) {
			ft, known := fields[k]
			switch {
			case known:
				unknownFields(m[k], ft, prefix+k+".", out)
			case prefix == "" && ignoredField(k) != "":
			default:
				*out = append(*out, prefix+k)
			}
		}
	case reflect.Slice:
		list, ok := raw.([]any)
		if !ok || t.Elem().Kind() == reflect.Uint8 {
			return
		}
		for i, item := range list {
			unknownFields(item, t.Elem(), fmt.Sprintf("%s[%d].", strings.TrimSuffix(prefix, "."), i), out)
		}
	default:
	}
}

// jsonFields adds to out the JSON names of t's fields and their types,
// with those of embedded structs without a name of their own, as
// encoding/json promotes them.
func jsonFields(t reflect.Type, out map[string]reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct:
			jsonFields(f.Type, out)
		case name == "":
			out[f.Name] = f.Type
		default:
			out[name] = f.Type
		}
	}
}

// ignoredWarnings says which of Deckhouse's fields are read and ignored.
func (d *Definition) ignoredWarnings() []string {
	var out []string
	if r := d.Requirements; r != nil {
		if r.Deckhouse != "" {
			out = append(out, DefinitionFile+": requirements.deckhouse ignored: there is no Deckhouse version to check")
		}
		if len(r.Bootstrapped) > 0 {
			out = append(out, DefinitionFile+": requirements.bootstrapped ignored: cluster bootstrap is Deckhouse's")
		}
	}
	return out
}

// translate fills the fields read from Deckhouse's forms: the disable
// message from its English message, requires from requirements.modules.
func (d *Definition) translate() {
	if d.Disable != nil && d.Disable.Message == "" {
		d.Disable.Message = d.Disable.Messages["en"]
	}
	if d.Requirements != nil && len(d.Requirements.Modules) > 0 {
		if d.Requires == nil {
			d.Requires = map[string]string{}
		}
		for name, c := range d.Requirements.Modules {
			if _, has := d.Requires[name]; !has {
				d.Requires[name] = c
			}
		}
	}
}

// kindOf names a decoded YAML value's kind for messages.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64:
		return "a number"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// validate checks the fields that need more than their type.
func (d *Definition) validate(name string) *DefinitionError {
	if d.Name != "" && d.Name != name {
		return &DefinitionError{Field: "name", Err: fmt.Errorf("%q is not the module's name %q (its directory name)", d.Name, name)}
	}
	if d.Weight != nil && *d.Weight < 0 {
		return &DefinitionError{Field: "weight", Err: fmt.Errorf("%d is negative", *d.Weight)}
	}
	if d.Namespace != "" {
		if errs := validation.IsDNS1123Label(d.Namespace); len(errs) > 0 {
			return &DefinitionError{Field: "namespace", Err: fmt.Errorf("%q: %s", d.Namespace, strings.Join(errs, "; "))}
		}
	}
	if d.Version != "" {
		if _, err := semver.NewVersion(d.Version); err != nil {
			return &DefinitionError{Field: "version", Err: fmt.Errorf("%q: %w", d.Version, err)}
		}
	}
	if r := d.Remediation; r != nil {
		switch r.Strategy {
		case "", "none", "rollback", "uninstall":
		default:
			return &DefinitionError{Field: "remediation.strategy", Err: fmt.Errorf("%q: want none, rollback or uninstall", r.Strategy)}
		}
		if r.Retries < 0 {
			return &DefinitionError{Field: "remediation.retries", Err: fmt.Errorf("%d is negative", r.Retries)}
		}
	}
	if err := d.validateDisable(); err != nil {
		return err
	}
	switch d.UpgradeOnValuesChange {
	case "", UpgradeAlways, UpgradeWhenRenderedChanges:
	default:
		return &DefinitionError{Field: "upgradeOnValuesChange", Err: fmt.Errorf("%q: want %s or %s", d.UpgradeOnValuesChange, UpgradeAlways, UpgradeWhenRenderedChanges)}
	}
	if err := d.validateDeckhouse(); err != nil {
		return err
	}
	if err := validateRequires("requires", name, d.Requires); err != nil {
		return err
	}
	if r := d.Requirements; r != nil {
		if err := validateRequires("requirements.modules", name, r.Modules); err != nil {
			return err
		}
		for _, req := range slices.Sorted(maps.Keys(r.Modules)) {
			if c, has := d.Requires[req]; has && c != r.Modules[req] {
				return &DefinitionError{Field: "requirements.modules." + req, Err: fmt.Errorf("%q, but requires says %q: keep one", r.Modules[req], c)}
			}
		}
	}
	return validateRules(d.RBAC)
}

func (d *Definition) validateDisable() *DefinitionError {
	if d.Disable == nil {
		return nil
	}
	if len(d.Disable.Message) > maxDisableMessage {
		return &DefinitionError{Field: "disable.message", Err: fmt.Errorf("%d bytes, at most %d", len(d.Disable.Message), maxDisableMessage)}
	}
	for _, lang := range slices.Sorted(maps.Keys(d.Disable.Messages)) {
		if n := len(d.Disable.Messages[lang]); n > maxDisableMessage {
			return &DefinitionError{Field: "disable.messages." + lang, Err: fmt.Errorf("%d bytes, at most %d", n, maxDisableMessage)}
		}
	}
	return nil
}

// validateDeckhouse checks the fields of Deckhouse's module.yaml.
func (d *Definition) validateDeckhouse() *DefinitionError {
	if g := d.ExclusiveGroup; g != "" {
		if errs := validation.IsValidLabelValue(g); len(errs) > 0 {
			return &DefinitionError{Field: "exclusiveGroup", Err: fmt.Errorf("%q: %s", g, strings.Join(errs, "; "))}
		}
	}
	for i, t := range d.Tags {
		if strings.TrimSpace(t) == "" {
			return &DefinitionError{Field: fmt.Sprintf("tags[%d]", i), Err: errors.New("is empty")}
		}
	}
	for i, t := range d.Subsystems {
		if strings.TrimSpace(t) == "" {
			return &DefinitionError{Field: fmt.Sprintf("subsystems[%d]", i), Err: errors.New("is empty")}
		}
	}
	if r := d.Requirements; r != nil && r.Kubernetes != "" {
		if _, err := semver.NewConstraint(r.Kubernetes); err != nil {
			return &DefinitionError{Field: "requirements.kubernetes", Err: fmt.Errorf("version constraint %q: %w", r.Kubernetes, err)}
		}
	}
	return nil
}

// validateRequires checks a map of required modules to version
// constraints; field names the map.
func validateRequires(field, name string, reqs map[string]string) *DefinitionError {
	for _, req := range slices.Sorted(maps.Keys(reqs)) {
		f := field + "." + req
		if req == name {
			return &DefinitionError{Field: f, Err: errors.New("a module cannot require itself")}
		}
		if !ValidName(req) {
			return &DefinitionError{Field: f, Err: fmt.Errorf("%q is not a module name", req)}
		}
		if c := reqs[req]; c != "" && c != "*" {
			if _, err := semver.NewConstraint(c); err != nil {
				return &DefinitionError{Field: f, Err: fmt.Errorf("version constraint %q: %w", c, err)}
			}
		}
	}
	return nil
}
