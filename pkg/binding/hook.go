package binding

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/addon-operator/addon-operator/pkg/hook"
)

// ConfigReader prints a hook's configuration (the hook run with
// --config); *hook.Executor is the real one.
type ConfigReader interface {
	Config(ctx context.Context, path string) ([]byte, error)
}

// Hook is a hook with its parsed configuration.
type Hook struct {
	Path string
	// Name is the path relative to the module or global hooks directory.
	Name   string
	Config *hook.Config
}

// Load runs every hook with --config and parses what it prints. The
// first error names the hook file.
func Load(ctx context.Context, configs ConfigReader, base string, paths []string, kind hook.Kind) ([]*Hook, error) {
	hooks := make([]*Hook, 0, len(paths))
	for _, p := range paths {
		name, err := filepath.Rel(base, p)
		if err != nil {
			name = p
		}
		out, err := configs.Config(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("hook %s: run --config: %w", p, err)
		}
		cfg, err := hook.ParseConfig(p, out, kind)
		if err != nil {
			return nil, err
		}
		hooks = append(hooks, &Hook{Path: p, Name: name, Config: cfg})
	}
	return hooks, nil
}

// ByOrder returns the hooks that declare lifecycle binding b, in ascending
// ORDER, ties broken by path.
func ByOrder(hooks []*Hook, b hook.Binding) []*Hook {
	var out []*Hook
	for _, h := range hooks {
		if _, ok := h.Config.Order(b); ok {
			out = append(out, h)
		}
	}
	slices.SortStableFunc(out, func(x, y *Hook) int {
		ox, _ := x.Config.Order(b)
		oy, _ := y.Config.Order(b)
		return cmp.Or(cmp.Compare(ox, oy), cmp.Compare(x.Path, y.Path))
	})
	return out
}
