package configwatch

import (
	"context"
	"errors"
	"log/slog"

	"github.com/addon-operator/addon-operator/pkg/config"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// WritePatch applies a hook's config-values patch and writes the changed
// keys back to the source. m is nil for global hooks. The patch is
// computed and applied in one step; a failed write undoes only the keys
// it wrote and that nothing changed since. While a deleted ConfigMap's
// last configuration is kept, the patch is kept in memory only: writing
// it would recreate the ConfigMap with these keys alone. Safe for
// concurrent use.
func (w *Watch) WritePatch(ctx context.Context, m *module.Module, p values.Patch) error {
	if len(p) == 0 {
		return nil
	}
	policy := values.GlobalHookRoots()
	if m != nil {
		policy = values.ModuleHookRoots(m.Key())
	}
	st := w.opts.Store
	// Applied before the write, so the watch event that echoes it (which
	// the main queue may handle before Write even returns) changes nothing.
	edit, undo, err := st.ApplyConfigPatch(m, p, policy)
	if err != nil || len(edit.Sections)+len(edit.Enabled) == 0 {
		return err
	}
	edit.NoCreate = w.health.KeepsDeleted()
	held := w.health.Held() == config.HoldEmptyUnconfirmed
	if held {
		// Writing would give the empty source a part of the
		// configuration, which would then replace all of it.
		err = config.ErrAbsent
	} else {
		err = w.opts.Source.Write(ctx, edit)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, config.ErrAbsent):
		log := w.log
		if m != nil {
			log = log.With(slog.String(logkey.Module, m.Name()))
		}
		level := slog.LevelDebug
		if w.health.FirstPatchKept() {
			level = slog.LevelWarn
		}
		if held {
			log.Log(ctx, level, "config patch kept in memory only: the configuration is held", slog.String(logkey.Name, w.opts.ConfigMap))
		} else {
			log.Log(ctx, level, "config patch kept in memory only: the ConfigMap was deleted", slog.String(logkey.Name, w.opts.ConfigMap))
		}
		return nil
	default:
		st.RevertEdit(edit, undo)
		return err
	}
}
