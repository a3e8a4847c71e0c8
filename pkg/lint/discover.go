package lint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/filelimit"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// discoveryRule sorts what module discovery warns about: the operator
// works around these, but each leaves a hook, script or module unused,
// which is an error of the tree. Other warnings stay warnings.
func discoveryRule(msg string) (string, Severity) {
	switch msg {
	case "hook file is not executable, ignored", "enabled script is not executable, ignored":
		return RuleNotExecutable, Error
	case "duplicate module dir ignored":
		return RuleDuplicateModule, Error
	default:
		return RuleDiscovery, Warning
	}
}

// discover finds the modules as the operator does. It returns nil when
// discovery fails; every joined error is a problem of its own.
func (l *linter) discover() *module.Set {
	rec := &recorder{}
	opts := l.in.Discover
	opts.Logger = slog.New(rec)
	mods, err := module.Discover(opts)
	for _, r := range rec.records {
		if r.msg == "module cannot run" {
			continue // reported by moduleErrs, with its file and key
		}
		rule, sev := discoveryRule(r.msg)
		msg := r.msg
		if r.reason != "" {
			msg += " (" + r.reason + ")"
		}
		l.add(sev, r.path, "", rule, errors.New(msg))
	}
	if err == nil {
		l.moduleErrs(mods)
		return mods
	}
	errs := []error{err}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		errs = joined.Unwrap()
	}
	for _, e := range errs {
		l.add(Error, strings.Join(l.in.Discover.ModulesDirs, ":"), "", RuleDiscovery, e)
	}
	return nil
}

// recorder is a slog.Handler keeping the records discovery logs.
type recorder struct {
	records []record
}

type record struct {
	msg, path, reason string
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	out := record{msg: rec.Message}
	rec.Attrs(func(a slog.Attr) bool {
		switch a.Key {
		case logkey.Path, logkey.Hook:
			out.path = a.Value.String()
		case logkey.Reason:
			out.reason = a.Value.String()
		}
		return true
	})
	r.records = append(r.records, out)
	return nil
}

func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recorder) WithGroup(string) slog.Handler      { return r }

// valuesFiles reports keys of values.yaml files that name no module: the
// operator reads only global, <moduleKey> and <moduleKey>Enabled, so a
// misspelled key is silently without effect.
func (l *linter) valuesFiles(mods *module.Set) {
	keys := moduleKeys(mods)
	for _, dir := range l.in.Discover.ModulesDirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			continue
		}
		l.unknownKeys(filepath.Join(abs, "values.yaml"), keys)
	}
	for _, m := range mods.Modules() {
		l.unknownKeys(filepath.Join(m.Path(), "values.yaml"), []string{m.Key()})
	}
}

// unknownKeys reports the top-level keys of a values file that are not
// global, one of keys or its Enabled flag.
func (l *linter) unknownKeys(path string, keys []string) {
	data, err := filelimit.ReadFile(path, filelimit.Default)
	if err != nil {
		return // missing; unreadable files fail discovery already
	}
	top, err := values.FromYAML(data)
	if err != nil {
		l.add(Error, path, "", RuleValuesFile, err)
		return
	}
	l.checkKeys(path, top, keys)
}

// checkKeys reports the top-level keys of values from file that are not
// global, one of keys or its Enabled flag.
func (l *linter) checkKeys(file string, top values.Values, keys []string) {
	path := file
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if k == config.GlobalKey || slices.Contains(keys, strings.TrimSuffix(k, "Enabled")) {
			continue
		}
		l.add(Error, path, k, RuleUnknownKey, errors.New(unknownKeyMessage(k, keys)))
	}
}

// configMap parses the ConfigMap as the operator does and reports keys
// naming no module. It returns nil without a ConfigMap or when it does not
// parse.
func (l *linter) configMap(mods *module.Set) *config.Config {
	if l.in.ConfigData == nil {
		return nil
	}
	cfg, err := config.Parse(l.in.ConfigData)
	if err != nil {
		for _, key := range config.InvalidKeys(err) {
			var ke *config.KeyError
			msg := err.Error()
			if keyErr(err, key, &ke) {
				msg = ke.Err.Error()
			}
			l.add(Error, l.in.ConfigFile, key, RuleConfigMapKey, errors.New(msg))
		}
		return nil
	}
	keys := moduleKeys(mods)
	unknown := map[string]bool{}
	for k := range cfg.Modules {
		unknown[k] = !slices.Contains(keys, k)
	}
	for k := range cfg.Enabled {
		unknown[config.EnabledKey(k)] = !slices.Contains(keys, k)
	}
	for _, k := range slices.Sorted(maps.Keys(unknown)) {
		if unknown[k] {
			l.add(Error, l.in.ConfigFile, k, RuleUnknownKey, errors.New(unknownKeyMessage(k, keys)))
		}
	}
	return cfg
}

// keyErr finds the *config.KeyError of key in err's tree.
func keyErr(err error, key string, out **config.KeyError) bool {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return false
	}
	for _, e := range joined.Unwrap() {
		if errors.As(e, out) && (*out).Key == key {
			return true
		}
	}
	return false
}

func moduleKeys(mods *module.Set) []string {
	keys := make([]string, 0, len(mods.Modules()))
	for _, m := range mods.Modules() {
		keys = append(keys, m.Key())
	}
	return keys
}

// unknownKeyMessage says that key names no module and suggests the
// nearest module key.
func unknownKeyMessage(key string, keys []string) string {
	base, enabled := strings.CutSuffix(key, "Enabled")
	msg := fmt.Sprintf("%q names no module", key)
	if s := nearest(base, keys); s != "" {
		if enabled {
			s = config.EnabledKey(s)
		}
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return msg
}

// nearest returns the candidate closest to s in edit distance, when close
// enough to be a likely misspelling ("" otherwise).
func nearest(s string, candidates []string) string {
	best, bestDist := "", len(s)/3+2
	for _, c := range candidates {
		if d := distance(strings.ToLower(s), strings.ToLower(c)); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// moduleErrs reports the modules that the operator would not run: those
// whose directory or module.yaml cannot be read (named by file and key),
// and those whose requirements are not met.
func (l *linter) moduleErrs(mods *module.Set) {
	for _, m := range mods.Modules() {
		err := m.Err()
		if err == nil {
			continue
		}
		var de *module.DefinitionError
		if errors.As(err, &de) {
			l.add(Error, de.Path, de.Field, RuleModuleDefinition, de.Err)
			continue
		}
		l.add(Error, m.Path(), "", RuleModuleDefinition, fmt.Errorf("module %q cannot run: %w", m.Name(), err))
	}
}
