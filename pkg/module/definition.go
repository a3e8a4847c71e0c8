package module

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
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

// DefinitionDisable is module.yaml's disable: whether disabling the module
// needs a confirmation, and what the refusal tells the user.
type DefinitionDisable struct {
	Confirmation bool   `json:"confirmation,omitempty"`
	Message      string `json:"message,omitempty"`
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

// readDefinition reads dir/module.yaml strictly: unknown fields and
// duplicate keys are errors. A missing file yields nil.
func readDefinition(dir, name string) (*Definition, error) {
	path := filepath.Join(dir, DefinitionFile)
	data, err := filelimit.ReadFile(path, filelimit.Default)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, loopError(path, err) // *fs.PathError names the file
	}
	def := &Definition{}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.UnmarshalStrict(data, def); err != nil {
			return nil, &DefinitionError{Path: path, Err: err}
		}
	}
	if err := def.validate(name); err != nil {
		err.Path = path
		return nil, err
	}
	return def, nil
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
	if d.Disable != nil && len(d.Disable.Message) > maxDisableMessage {
		return &DefinitionError{Field: "disable.message", Err: fmt.Errorf("%d bytes, at most %d", len(d.Disable.Message), maxDisableMessage)}
	}
	switch d.UpgradeOnValuesChange {
	case "", UpgradeAlways, UpgradeWhenRenderedChanges:
	default:
		return &DefinitionError{Field: "upgradeOnValuesChange", Err: fmt.Errorf("%q: want %s or %s", d.UpgradeOnValuesChange, UpgradeAlways, UpgradeWhenRenderedChanges)}
	}
	for _, req := range slices.Sorted(maps.Keys(d.Requires)) {
		field := "requires." + req
		if req == name {
			return &DefinitionError{Field: field, Err: errors.New("a module cannot require itself")}
		}
		if !ValidName(req) {
			return &DefinitionError{Field: field, Err: fmt.Errorf("%q is not a module name", req)}
		}
		if c := d.Requires[req]; c != "" {
			if _, err := semver.NewConstraint(c); err != nil {
				return &DefinitionError{Field: field, Err: fmt.Errorf("version constraint %q: %w", c, err)}
			}
		}
	}
	return validateRules(d.RBAC)
}
