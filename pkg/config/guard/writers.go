package guard

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"

	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/module"
)

// AnyModule is the Writers entry for every module, and global, that has
// no entry of its own.
const AnyModule = "*"

// maxWritersFile bounds the writers file; a real one is a few kilobytes.
const maxWritersFile = 1 << 20

// Writers says who may write which module's settings (its ModuleConfig,
// or its keys in the ConfigMap): by module name, config.GlobalKey for the global
// section, AnyModule for the rest. A name without an entry, when there is
// no AnyModule entry either, may be written by everyone the API server
// lets write. The nil Writers restricts nothing.
type Writers map[string]Principals

// Principals are the groups and users that may write one module's
// settings.
type Principals struct {
	Groups []string `json:"groups,omitempty"`
	Users  []string `json:"users,omitempty"`
}

// Allows reports whether w may write the settings of name.
func (ws Writers) Allows(name string, w Writer) bool {
	p, ok := ws[name]
	if !ok {
		if p, ok = ws[AnyModule]; !ok {
			return true
		}
	}
	if slices.Contains(p.Users, w.Name) {
		return true
	}
	for _, g := range w.Groups {
		if slices.Contains(p.Groups, g) {
			return true
		}
	}
	return false
}

// ReadWriters reads a writers file: YAML mapping module names (or
// "global", or "*") to groups and users, for example
//
//	global: {groups: [platform-admins]}
//	cert-manager: {groups: [platform-admins, team-certs]}
//	"*": {groups: [platform-admins]}
//
// Unknown fields, duplicate keys and entries that name no module of
// known (when known is not nil) are errors naming the file and the entry.
func ReadWriters(path string, known func(module string) bool) (Writers, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	data, err := io.ReadAll(io.LimitReader(f, maxWritersFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxWritersFile {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxWritersFile)
	}
	var ws Writers
	if err := yaml.UnmarshalStrict(data, &ws); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if ws == nil {
		ws = Writers{}
	}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(ws)) {
		switch {
		case name == config.GlobalKey || name == AnyModule:
		case !module.ValidName(name):
			errs = append(errs, fmt.Errorf("%s: entry %q: not a module name", path, name))
		case known != nil && !known(name):
			errs = append(errs, fmt.Errorf("%s: entry %q: no module of this name", path, name))
		}
		if p := ws[name]; len(p.Groups) == 0 && len(p.Users) == 0 {
			errs = append(errs, fmt.Errorf("%s: entry %q: no groups or users: nobody could write its settings", path, name))
		}
	}
	return ws, errors.Join(errs...)
}
