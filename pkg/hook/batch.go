package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/addon-operator/addon-operator/pkg/hook/batch"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// Batch binaries, several hooks in one native executable, are run by
// package batch; their hooks' configurations are parsed here.

// ReadinessID is the ID of a batch binary's readiness hook.
const ReadinessID = batch.ReadinessID

// SettingsCheckTimeout bounds one settings check ("hook check").
const SettingsCheckTimeout = batch.SettingsCheckTimeout

// SettingsCheckResult is what a settings check answered.
type SettingsCheckResult = batch.SettingsCheckResult

// batchExec runs batch binaries as the Executor runs hooks.
func (e *Executor) batchExec() batch.Exec {
	return batch.Exec{Run: e.execute, Env: e.Env, Logger: e.logger(), MaxOutput: e.maxOutput(), MaxLogBytes: e.MaxLogBytes, TempDir: e.TempDir}
}

// BatchConfig returns what the batch binary at path prints for "hook
// config", or nil when the file is not a batch binary (see batch.Config).
func (e *Executor) BatchConfig(ctx context.Context, path string) ([]byte, error) {
	return batch.Config(ctx, e.batchExec(), path)
}

// HasSettingsCheck reports whether the file at path is a batch binary with
// a settings check. The answer is remembered until the file changes.
func (e *Executor) HasSettingsCheck(ctx context.Context, path string) (bool, error) {
	return e.checks.Has(ctx, e.batchExec(), path)
}

// CachedSettingsCheck is the answer CheckSettings would give for settings
// without running the check, when the file and the settings are those of
// the last answer.
func (e *Executor) CachedSettingsCheck(path string, settings values.Values) (SettingsCheckResult, bool) {
	return e.checks.Cached(path, settings)
}

// CheckSettings runs the settings check of the batch binary at path with
// settings (a module's configuration section); see batch.Checks.Check.
func (e *Executor) CheckSettings(ctx context.Context, path string, settings values.Values) (SettingsCheckResult, error) {
	return e.checks.Check(ctx, e.batchExec(), path, settings)
}

// BatchHook is one hook of a batch binary.
type BatchHook struct {
	// ID is the hook's index in the binary's list, or ReadinessID.
	ID string
	// Name is the hook's metadata name, possibly empty.
	Name string
	// Args run this hook: "hook run <id>" or "hook ready".
	Args   []string
	Config *Config
}

// batchFile is the "hook config" document of the current protocol.
type batchFile struct {
	Version   string            `json:"version"`
	Hooks     []json.RawMessage `json:"hooks"`
	Readiness json.RawMessage   `json:"readiness,omitempty"`
}

// ParseBatchConfig parses what a batch binary printed for "hook config":
// the versioned object, or the older bare array. Each hook's configuration
// is read as in the module SDK (executeHookOnEvent is a boolean, every
// binding is in one group "main" so each run sees all snapshots, unknown
// fields such as metadata are ignored) and then validated like any hook's
// --config. Errors name source and the hook's ID.
func ParseBatchConfig(source string, data []byte, kind Kind) ([]BatchHook, error) {
	trimmed := bytes.TrimSpace(data)
	var file batchFile
	switch {
	case len(trimmed) > 0 && trimmed[0] == '[':
		if err := json.Unmarshal(trimmed, &file.Hooks); err != nil {
			return nil, &ConfigError{Source: source, Err: fmt.Errorf("decode hook config array: %w", err)}
		}
	default:
		if err := json.Unmarshal(trimmed, &file); err != nil {
			return nil, &ConfigError{Source: source, Err: fmt.Errorf("decode hook config: %w", err)}
		}
		if file.Version != "v1" {
			return nil, &ConfigError{Source: source, Field: "version", Err: fmt.Errorf("unsupported batch config version %q, want v1", file.Version)}
		}
	}
	if len(file.Hooks) == 0 && len(file.Readiness) == 0 {
		return nil, &ConfigError{Source: source, Err: errors.New("batch binary lists no hooks")}
	}
	var out []BatchHook
	var errs []error
	add := func(id string, args []string, raw json.RawMessage) {
		h, err := parseBatchHook(source+"#"+id, raw, kind)
		if err != nil {
			errs = append(errs, err)
			return
		}
		h.ID, h.Args = id, args
		out = append(out, *h)
	}
	for i, raw := range file.Hooks {
		id := strconv.Itoa(i)
		add(id, []string{"hook", "run", id}, raw)
	}
	if len(file.Readiness) > 0 && !bytes.Equal(bytes.TrimSpace(file.Readiness), []byte("null")) {
		probe, err := batch.ProbeConfig(file.Readiness, batch.ReadinessQueue(source))
		if err != nil {
			return nil, &ConfigError{Source: source + "#" + ReadinessID, Err: err}
		}
		add(ReadinessID, []string{"hook", "ready"}, probe)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// parseBatchHook converts one SDK hook configuration into a shell-operator
// v1 configuration and parses that.
func parseBatchHook(source string, raw json.RawMessage, kind Kind) (*BatchHook, error) {
	var sdk map[string]any
	if err := json.Unmarshal(raw, &sdk); err != nil {
		return nil, &ConfigError{Source: source, Err: fmt.Errorf("decode hook config: %w", err)}
	}
	if sdk == nil {
		return nil, &ConfigError{Source: source, Err: errors.New("hook config is null")}
	}
	var lifecycle []string
	for _, b := range slices.Concat(Global.lifecycle(), Module.lifecycle()) {
		lifecycle = append(lifecycle, string(b))
	}
	data, err := json.Marshal(batch.ConvertSDK(sdk, lifecycle))
	if err != nil {
		return nil, &ConfigError{Source: source, Err: fmt.Errorf("encode converted config: %w", err)}
	}
	cfg, err := ParseConfig(source, data, kind)
	if err != nil {
		return nil, err
	}
	h := &BatchHook{Config: cfg}
	if md, ok := sdk["metadata"].(map[string]any); ok {
		h.Name, _ = md["name"].(string)
	}
	return h, nil
}
