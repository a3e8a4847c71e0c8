package module

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// Wait says whether and how a module waits for another before it runs.
type Wait int

// Waits, from none to the strongest.
const (
	// WaitNone: the modules run independently.
	WaitNone Wait = iota
	// WaitAttempt: a module without module.yaml starts once every module
	// of a lower order finished its first attempt, failed or not, as
	// order groups always did.
	WaitAttempt
	// WaitReady: a module starts once every module its module.yaml
	// requires is ready.
	WaitReady
)

// Waits returns how m waits for other.
func (m *Module) Waits(other *Module) Wait {
	switch {
	case m == other:
		return WaitNone
	case m.def != nil:
		if _, ok := m.def.Requires[other.name]; ok {
			return WaitReady
		}
		return WaitNone
	case other.order < m.order:
		return WaitAttempt
	}
	return WaitNone
}

// checkRequires checks what module.yaml files require across all modules:
// every required module exists and its version meets the constraint, and
// no module waits for itself through a chain of requirements and orders.
// The error names the chain.
func checkRequires(byName map[string]*Module) error {
	names := slices.Sorted(maps.Keys(byName))
	for _, name := range names {
		m := byName[name]
		for _, req := range m.Requires() {
			other, ok := byName[req]
			if !ok {
				return fmt.Errorf("module %q: %s requires %q, which is no module", name, DefinitionFile, req)
			}
			if err := meetsConstraint(m, other); err != nil {
				return fmt.Errorf("module %q: %s requires %q: %w", name, DefinitionFile, req, err)
			}
		}
	}
	if chain := findCycle(names, byName); chain != nil {
		return fmt.Errorf("modules wait for each other: %s%s", strings.Join(chain, " -> "), cycleHint(chain, byName))
	}
	return nil
}

// meetsConstraint checks other's module.yaml version against m's
// constraint for it.
func meetsConstraint(m, other *Module) error {
	c := m.def.Requires[other.name]
	if c == "" || c == "*" {
		return nil
	}
	constraint, _ := semver.NewConstraint(c) // validated when read
	v := other.Definition().Version
	if v == "" {
		return fmt.Errorf("version constraint %q, but %q has no version in its %s", c, other.name, DefinitionFile)
	}
	version, _ := semver.NewVersion(v) // validated when read
	if ok, errs := constraint.Validate(version); !ok {
		return fmt.Errorf("version %s of %q does not meet %q: %v", v, other.name, c, errs)
	}
	return nil
}

// findCycle returns a chain of modules that ends where it began, nil when
// there is none. Modules are visited in name order, so the chain reported
// is the same every time.
func findCycle(names []string, byName map[string]*Module) []string {
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[string]int, len(names))
	var path []string
	var visit func(name string) []string
	visit = func(name string) []string {
		state[name] = onPath
		path = append(path, name)
		m := byName[name]
		for _, next := range names {
			if m.Waits(byName[next]) == WaitNone {
				continue
			}
			switch state[next] {
			case onPath:
				start := slices.Index(path, next)
				return append(slices.Clone(path[start:]), next)
			case unseen:
				if chain := visit(next); chain != nil {
					return chain
				}
			}
		}
		path = path[:len(path)-1]
		state[name] = done
		return nil
	}
	for _, name := range names {
		if state[name] == unseen {
			if chain := visit(name); chain != nil {
				return chain
			}
		}
	}
	return nil
}

// cycleHint explains a chain that goes through modules without
// module.yaml, which wait for every module of a lower order.
func cycleHint(chain []string, byName map[string]*Module) string {
	var implicit []string
	for _, name := range chain[:len(chain)-1] {
		if !byName[name].HasDefinition() {
			implicit = append(implicit, name)
		}
	}
	if len(implicit) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s without %s wait for every module of a lower order; give them a %s)",
		strings.Join(implicit, ", "), DefinitionFile, DefinitionFile)
}
