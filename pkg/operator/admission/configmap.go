package admission

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/addon-operator/addon-operator/pkg/config"
)

// CheckConfigMap checks a ConfigMap's data as applying it would: parse,
// then every section against its schema and the settings checks, then the
// modules it switches on against their exclusiveGroups. The error names
// each wrong key and rule; warnings name keys of no known module, with
// the closest module key.
func (c *Checks) CheckConfigMap(data map[string]string) ([]string, error) {
	cfg, err := config.Parse(data)
	if err != nil {
		return nil, err
	}
	warnings := c.unknownModuleKeys(cfg)
	moduleErrs, globalErr := c.Validate(cfg, Admission)
	errs := c.SectionErrs(moduleErrs)
	if globalErr != nil {
		errs = append([]error{&config.KeyError{Key: config.GlobalKey, Err: globalErr}}, errs...)
	}
	enable := map[string]bool{}
	for key, on := range cfg.Enabled {
		if name, ok := c.moduleByKey(key); ok {
			enable[name] = on
		}
	}
	return warnings, errors.Join(errors.Join(errs...), c.checkExclusive(enable))
}

// unknownModuleKeys warns about sections and Enabled flags of modules
// that do not exist.
func (c *Checks) unknownModuleKeys(cfg *config.Config) []string {
	known := make([]string, 0, len(c.modules.Modules()))
	for _, m := range c.modules.Modules() {
		known = append(known, m.Key())
	}
	keys := map[string]string{}
	for k := range cfg.Modules {
		keys[k] = k
	}
	for k := range cfg.Enabled {
		keys[config.EnabledKey(k)] = k
	}
	var warnings []string
	for _, key := range slices.Sorted(maps.Keys(keys)) {
		moduleKey := keys[key]
		if _, ok := c.moduleByKey(moduleKey); ok {
			continue
		}
		w := fmt.Sprintf("ConfigMap key %q names no module", key)
		if near := closest(moduleKey, known); near != "" {
			if key != moduleKey {
				near = config.EnabledKey(near)
			}
			w += fmt.Sprintf("; did you mean %q?", near)
		}
		warnings = append(warnings, w)
	}
	return warnings
}

// closest returns the candidate nearest to s by edit distance, when it is
// near enough to be a likely typo.
func closest(s string, candidates []string) string {
	best, bestD := "", len(s)/3+2
	for _, c := range candidates {
		if d := editDistance(s, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of two strings, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
