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

// Waits returns how m waits for other. A module that is not critical
// waits for the first attempt of every critical module that does not
// require it.
func (m *Module) Waits(other *Module) Wait {
	switch {
	case m == other:
		return WaitNone
	case m.requires(other.name):
		return WaitReady
	case other.Critical() && !m.Critical() && !other.requires(m.name):
		// Critical modules converge first.
		return WaitAttempt
	case m.def != nil:
		return WaitNone
	case other.order < m.order:
		return WaitAttempt
	}
	return WaitNone
}

// checkRequires checks what module.yaml files require across all modules.
// A module that requires a module that does not exist, a version that is
// not there, or a Kubernetes version the cluster (kubeVersion, "" when
// unknown) does not have, cannot run: its Err says why. No module may wait
// for itself through a chain of requirements and orders: that error, which
// names the chain, is the discovery's.
func checkRequires(byName map[string]*Module, kubeVersion string) error {
	names := slices.Sorted(maps.Keys(byName))
	for _, name := range names {
		m := byName[name]
		if m.err != nil {
			continue
		}
		m.err = unmetRequirement(m, byName, kubeVersion)
	}
	if chain := findCycle(names, byName); chain != nil {
		return fmt.Errorf("modules wait for each other: %s%s", strings.Join(chain, " -> "), cycleHint(chain, byName))
	}
	return nil
}

// unmetRequirement returns the first requirement of m that is not met.
func unmetRequirement(m *Module, byName map[string]*Module, kubeVersion string) error {
	for _, req := range m.Requires() {
		other, ok := byName[req]
		if !ok {
			return fmt.Errorf("%s requires %q, which is no module", DefinitionFile, req)
		}
		if err := meetsConstraint(m, other); err != nil {
			return fmt.Errorf("%s requires %q: %w", DefinitionFile, req, err)
		}
	}
	if m.def == nil || m.def.Requirements == nil || m.def.Requirements.Kubernetes == "" || kubeVersion == "" {
		return nil
	}
	c := m.def.Requirements.Kubernetes
	constraint, _ := semver.NewConstraint(c) // validated when read
	v, err := semver.NewVersion(kubeVersion)
	if err != nil {
		return fmt.Errorf("%s requirements.kubernetes %q: cluster version %q: %w", DefinitionFile, c, kubeVersion, err)
	}
	// Pre-release builds (v1.31.0-rc.1, v1.30.2+k3s1 is metadata) count
	// as their release: a constraint on 1.31 means any build of it.
	if rel, err := v.SetPrerelease(""); err == nil {
		v = &rel
	}
	if ok, _ := constraint.Validate(v); !ok {
		return fmt.Errorf("%s requirements.kubernetes %q: the cluster runs Kubernetes %s", DefinitionFile, c, kubeVersion)
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
	v := other.Version()
	if v == "" {
		return fmt.Errorf("version constraint %q, but %q has no version in its %s or Chart.yaml", c, other.name, DefinitionFile)
	}
	version, err := semver.NewVersion(v)
	if err != nil {
		return fmt.Errorf("version %q of %q: %w", v, other.name, err)
	}
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

// requires reports whether m's module.yaml requires the named module.
func (m *Module) requires(name string) bool {
	if m.def == nil {
		return false
	}
	_, ok := m.def.Requires[name]
	return ok
}
