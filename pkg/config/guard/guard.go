// Package guard decides, at admission, whether a write to the operator's
// configuration (a ModuleConfig or the ConfigMap) may be made: whether its
// writer may change the modules' settings it touches (Writers), and whether
// a module it disables needs the allow-disabling confirmation.
package guard

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// AllowDisablingAnnotation, set to "true" on a ModuleConfig or on the
// operator's ConfigMap, confirms that a write may disable a module whose
// module.yaml asks for a confirmation (disable.confirmation).
// DeckhouseAllowDisablingAnnotation, Deckhouse's name for the same
// confirmation, is accepted too.
const (
	AllowDisablingAnnotation          = "addon-operator.io/allow-disabling"
	DeckhouseAllowDisablingAnnotation = "modules.deckhouse.io/allow-disabling"
)

// Operations of a guarded write, as admission requests name them.
const (
	OpCreate = "CREATE"
	OpUpdate = "UPDATE"
	OpDelete = "DELETE"
)

// Writer is who makes a write, as the API server authenticated them.
type Writer struct {
	Name   string
	Groups []string
}

func (w Writer) String() string { return fmt.Sprintf("user %q", w.Name) }

// Write is one write to a ModuleConfig or to the operator's ConfigMap:
// Old is the stored object (nil on CREATE), New the object to store (nil
// on DELETE), both as JSON.
type Write struct {
	Operation string
	Writer    Writer
	Old, New  []byte
}

// Guard decides, at admission, whether a write to the configuration may
// disable a module and whether its writer may change the modules' settings
// it touches. It reads only what it was made with and is safe for
// concurrent use.
type Guard struct {
	// Writers says who may write which module's settings; nil lets
	// everyone the API server lets write.
	Writers Writers
	// Confirmation says whether disabling a module, by name, needs the
	// allow-disabling annotation, and the module's message.
	Confirmation func(module string) (needed bool, message string)
	// Self reports the operator's own identity: its writes (config values
	// patches of hooks) are exempt from Writers.
	Self func(Writer) bool
}

// objectMeta is what the guard reads of an object's metadata.
type objectMeta struct {
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

// guardedModuleConfig is what the guard reads of a ModuleConfig.
type guardedModuleConfig struct {
	objectMeta
	Spec struct {
		Enabled  *bool           `json:"enabled"`
		Settings json.RawMessage `json:"settings"`
	} `json:"spec"`
}

// guardedConfigMap is what the guard reads of a ConfigMap.
type guardedConfigMap struct {
	objectMeta
	Data map[string]string `json:"data"`
}

// CheckModuleConfig checks a write to a ModuleConfig: its writer must be
// one of its module's writers, and a write that takes the object's say
// away from enabled (deleted, or spec.enabled turned false or dropped
// after true) needs the confirmation its module asks for.
func (g *Guard) CheckModuleConfig(w Write) error {
	var old, cur *guardedModuleConfig
	if err := decodeGuarded(w.Old, &old); err != nil {
		return fmt.Errorf("decode the stored ModuleConfig: %w", err)
	}
	if err := decodeGuarded(w.New, &cur); err != nil {
		return fmt.Errorf("decode ModuleConfig: %w", err)
	}
	var name string
	switch {
	case cur != nil:
		name = cur.Metadata.Name
	case old != nil:
		name = old.Metadata.Name
	default:
		return errors.New("no ModuleConfig in the request")
	}
	if err := g.checkWriter(w.Writer, name); err != nil {
		return err
	}
	if name == config.GlobalKey || !disablesByObject(old, cur) {
		return nil
	}
	if allowsDisabling(annotationsOf(old), annotationsOf(cur)) {
		return nil
	}
	return g.needsConfirmation(name, "ModuleConfig "+name)
}

// disablesByObject reports whether a ModuleConfig write moves the
// object's say away from enabled: to enabled: false from anything else,
// or from enabled: true to nothing (dropped or deleted), which leaves the
// module to its defaults.
func disablesByObject(old, cur *guardedModuleConfig) bool {
	was, is := specEnabled(old), specEnabled(cur)
	switch {
	case is != nil && !*is:
		return was == nil || *was
	case is == nil:
		return was != nil && *was
	default:
		return false
	}
}

func specEnabled(mc *guardedModuleConfig) *bool {
	if mc == nil {
		return nil
	}
	return mc.Spec.Enabled
}

// CheckConfigMap checks a write to the operator's ConfigMap: every module
// whose keys (section, Enabled, Maintenance) the write changes, and global,
// must be the writer's to write, and a write that disables a module
// ("<moduleKey>Enabled" turned "false", or dropped after "true", or the
// ConfigMap deleted) needs the confirmation its module asks for.
func (g *Guard) CheckConfigMap(w Write) error {
	var old, cur *guardedConfigMap
	if err := decodeGuarded(w.Old, &old); err != nil {
		return fmt.Errorf("decode the stored ConfigMap: %w", err)
	}
	if err := decodeGuarded(w.New, &cur); err != nil {
		return fmt.Errorf("decode ConfigMap: %w", err)
	}
	oldData, newData := dataOf(old), dataOf(cur)
	var errs []error
	for _, name := range changedModules(oldData, newData) {
		if err := g.checkWriter(w.Writer, name); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if allowsDisabling(annotationsOf(old), annotationsOf(cur)) {
		return nil
	}
	for _, name := range disabledByKeys(oldData, newData) {
		if err := g.needsConfirmation(name, "ConfigMap key "+config.EnabledKey(module.KeyFor(name))); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func dataOf(cm *guardedConfigMap) map[string]string {
	if cm == nil {
		return nil
	}
	return cm.Data
}

// changedModules returns, sorted, the module names (and config.GlobalKey) whose
// ConfigMap keys differ between old and cur.
func changedModules(old, cur map[string]string) []string {
	names := map[string]bool{}
	for key := range maps.Keys(old) {
		if v, ok := cur[key]; !ok || v != old[key] {
			names[config.ModuleOfKey(key)] = true
		}
	}
	for key := range maps.Keys(cur) {
		if _, ok := old[key]; !ok {
			names[config.ModuleOfKey(key)] = true
		}
	}
	return slices.Sorted(maps.Keys(names))
}

// disabledByKeys returns, sorted, the modules whose Enabled key turns
// "false" from anything else, or goes away after "true".
func disabledByKeys(old, cur map[string]string) []string {
	var names []string
	for _, key := range slices.Sorted(maps.Keys(unionStrings(old, cur))) {
		moduleKey, ok := config.EnabledKeyModule(key)
		if !ok {
			continue
		}
		was, wasSet := old[key]
		is, isSet := cur[key]
		was, is = strings.TrimSpace(was), strings.TrimSpace(is)
		if (isSet && is == "false" && (!wasSet || was != "false")) || (!isSet && wasSet && was == "true") {
			names = append(names, module.NameFor(moduleKey))
		}
	}
	return names
}

func unionStrings(a, b map[string]string) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// checkWriter refuses a writer who is not among name's writers.
func (g *Guard) checkWriter(w Writer, name string) error {
	if g.Writers == nil || (g.Self != nil && g.Self(w)) || g.Writers.Allows(name, w) {
		return nil
	}
	what := fmt.Sprintf("module %q", name)
	if name == config.GlobalKey {
		what = "the global section"
	}
	return fmt.Errorf("%s may not write the settings of %s: not among its writers in the operator's --module-writers file", w, what)
}

// needsConfirmation refuses disabling name through what when its module
// asks for a confirmation.
func (g *Guard) needsConfirmation(name, what string) error {
	if g.Confirmation == nil {
		return nil
	}
	needed, message := g.Confirmation(name)
	if !needed {
		return nil
	}
	msg := fmt.Sprintf("%s disables module %q, which needs a confirmation", what, name)
	if message != "" {
		msg += ": " + strings.TrimSpace(message)
	}
	return fmt.Errorf("%s; to disable it, annotate the object with %s=true (or %s=true) first",
		msg, AllowDisablingAnnotation, DeckhouseAllowDisablingAnnotation)
}

// annotated is an object whose annotations the guard reads.
type annotated interface{ annotations() map[string]string }

func (m *objectMeta) annotations() map[string]string { return m.Metadata.Annotations }

// annotationsOf returns an object's annotations, nil for no object.
func annotationsOf[T any, PT interface {
	*T
	annotated
}](obj PT) map[string]string {
	if obj == nil {
		return nil
	}
	return obj.annotations()
}

// allowsDisabling reports whether any of the objects' annotations (the
// stored object's and the new one's: on DELETE there is only the stored
// one, on UPDATE either may carry it) confirms disabling.
func allowsDisabling(annotations ...map[string]string) bool {
	for _, a := range annotations {
		for _, key := range []string{AllowDisablingAnnotation, DeckhouseAllowDisablingAnnotation} {
			if strings.TrimSpace(a[key]) == "true" {
				return true
			}
		}
	}
	return false
}

// decodeGuarded decodes raw into a new *T, leaving out nil for an absent
// object.
func decodeGuarded[T any](raw []byte, out **T) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	v := new(T)
	if err := json.Unmarshal(raw, v); err != nil {
		return err
	}
	*out = v
	return nil
}
