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

// BatchReader recognises batch binaries (several hooks in one native
// executable) and prints their configuration; *hook.Executor is the real
// one. BatchConfig returns nil for a file that is not a batch binary.
type BatchReader interface {
	BatchConfig(ctx context.Context, path string) ([]byte, error)
}

// Hook is a hook with its parsed configuration.
type Hook struct {
	Path string
	// Args run the hook: a batch binary's "hook run <id>"; none for a
	// plain hook.
	Args []string
	// Name is the path relative to the module or global hooks directory;
	// a batch binary's hooks add ":<metadata name>:<id>" to it.
	Name   string
	Config *hook.Config
}

// Load runs every hook with --config and parses what it prints. When
// configs is also a BatchReader, a batch binary contributes each of its
// hooks instead. The first error names the hook file.
func Load(ctx context.Context, configs ConfigReader, base string, paths []string, kind hook.Kind) ([]*Hook, error) {
	hooks := make([]*Hook, 0, len(paths))
	batches, _ := configs.(BatchReader)
	for _, p := range paths {
		name, err := filepath.Rel(base, p)
		if err != nil {
			name = p
		}
		if batches != nil {
			batch, err := loadBatch(ctx, batches, p, name, kind)
			if err != nil {
				return nil, err
			}
			if batch != nil {
				hooks = append(hooks, batch...)
				continue
			}
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

// loadBatch returns the hooks of the batch binary at path, or nil when it
// is not one.
func loadBatch(ctx context.Context, batches BatchReader, path, name string, kind hook.Kind) ([]*Hook, error) {
	out, err := batches.BatchConfig(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("hook %s: %w", path, err)
	}
	if out == nil {
		return nil, nil
	}
	parsed, err := hook.ParseBatchConfig(path, out, kind)
	if err != nil {
		return nil, err
	}
	hooks := make([]*Hook, 0, len(parsed))
	for _, b := range parsed {
		n := name + ":" + b.Name + ":" + b.ID
		if b.ID == hook.ReadinessID {
			n = name + ":" + hook.ReadinessID
		}
		hooks = append(hooks, &Hook{Path: path, Args: b.Args, Name: n, Config: b.Config})
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
