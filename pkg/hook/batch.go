package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// A batch hook is one native executable carrying several hooks, as built
// with the established module SDK or with this project's pkg/sdk. It speaks
// a command-line protocol on top of the file protocol:
//
//	hook list        prints "Found N items:" and one line per hook
//	hook config      prints {"version":"v1","hooks":[...],"readiness":{...}}
//	                 (older binaries print a bare JSON array of hook configs)
//	hook run <id>    runs hook <id> (its index in "hooks") with the usual files
//	hook ready       runs the readiness hook with the usual files
//
// Only native executables (ELF) are asked "hook list": a script is never
// run with arguments it does not expect, it only ever gets --config.

// batchProbeTimeout bounds "hook list": a native executable that is not a
// batch hook and ignores its arguments must not hold up module loading.
const batchProbeTimeout = 30 * time.Second

// ReadinessID is the ID of a batch binary's readiness hook.
const ReadinessID = "ready"

// batchListed matches the first line a batch binary prints for "hook list".
var batchListed = regexp.MustCompile(`(?m)^Found ([1-9]\d*) items`)

// IsNative reports whether the file at path is a native (ELF) executable.
// Scripts start with "#!" and are not.
func IsNative(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("open hook: %w", err)
	}
	defer f.Close()
	magic := make([]byte, 4)
	if _, err := io.ReadFull(f, magic); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return false, nil
		}
		return false, fmt.Errorf("read hook: %w", err)
	}
	return bytes.Equal(magic, []byte{0x7f, 'E', 'L', 'F'}), nil
}

// BatchConfig returns what the batch binary at path prints for "hook
// config", or nil when path is not a batch binary: not a native executable,
// or one that does not answer "hook list" with "Found N items" (N > 0).
// Such a file is a plain hook and is asked --config as usual.
func (e *Executor) BatchConfig(ctx context.Context, path string) ([]byte, error) {
	native, err := IsNative(path)
	if err != nil || !native {
		return nil, err
	}
	list := &limitedBuffer{limit: e.maxOutput()}
	err = e.execute(ctx, process{
		path: path, args: []string{"hook", "list"}, env: slices.Concat(os.Environ(), e.Env),
		timeout: batchProbeTimeout, logger: slog.New(slog.DiscardHandler), stdout: list,
	})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil || !batchListed.Match(list.buf) {
		// A plain native hook may exit non-zero on arguments it does not
		// know; that only means it is not a batch binary.
		return nil, nil //nolint:nilerr // not a batch binary: the caller asks --config instead
	}
	out := &limitedBuffer{limit: e.maxOutput()}
	err = e.execute(ctx, process{
		path: path, args: []string{"hook", "config"}, env: slices.Concat(os.Environ(), e.Env),
		logger: e.logger().With(slog.String(logkey.Hook, path)), stdout: out, logLimit: e.MaxLogBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("run hook config: %w", err)
	}
	if out.overflow {
		return nil, fmt.Errorf("hook config output larger than %d bytes", out.limit)
	}
	return out.buf, nil
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
		probe, err := probeConfig(file.Readiness, ReadinessQueue(source))
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
	v1 := map[string]any{"configVersion": "v1"}
	// Every lifecycle key is kept, so that ParseConfig names one that does
	// not fit the hook's kind.
	for _, b := range slices.Concat(Global.lifecycle(), Module.lifecycle()) {
		if v, ok := sdk[string(b)]; ok && v != nil {
			v1[string(b)] = v
		}
	}
	if s, ok := sdk["schedule"].([]any); ok && len(s) > 0 {
		v1["schedule"] = convertList(s, scheduleKeys(), sdk["allowFailure"])
	}
	if k, ok := sdk["kubernetes"].([]any); ok && len(k) > 0 {
		v1["kubernetes"] = convertList(k, kubernetesKeys(), sdk["allowFailure"])
	}
	if s, ok := sdk["settings"].(map[string]any); ok {
		v1["settings"] = convertSettings(s)
	}
	data, err := json.Marshal(v1)
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

// scheduleKeys and kubernetesKeys list the keys of the SDK's binding
// configs that keep their meaning in v1.
func scheduleKeys() []string {
	return []string{"name", "crontab", "queue", "includeSnapshotsFrom", "allowFailure", "group"}
}

func kubernetesKeys() []string {
	return []string{
		"name", "apiVersion", "kind", "nameSelector", "namespace", "labelSelector", "fieldSelector",
		"executeHookOnSynchronization", "waitForSynchronization", "keepFullObjectsInMemory", "jqFilter",
		"allowFailure", "includeSnapshotsFrom", "queue", "group",
	}
}

// convertList keeps the known keys of each binding, puts it in group
// "main", turns executeHookOnEvent: false into [] (true means every event),
// keeps only filter results of a binding with a jqFilter unless
// keepFullObjectsInMemory says otherwise, and applies the hook-level allowFailure to bindings that do not set it.
func convertList(items []any, keys []string, allowFailure any) []any {
	out := make([]any, 0, len(items))
	for _, it := range items {
		in, ok := it.(map[string]any)
		if !ok {
			out = append(out, it) // let ParseConfig name the problem
			continue
		}
		b := map[string]any{"group": "main"}
		for _, k := range keys {
			if v, ok := in[k]; ok && v != nil {
				b[k] = v
			}
		}
		switch v := in["executeHookOnEvent"].(type) {
		case bool:
			if !v {
				b["executeHookOnEvent"] = []any{}
			}
		case []any: // this project's SDK writes the v1 list
			b["executeHookOnEvent"] = v
		}
		// The module SDK keeps only filter results unless told otherwise;
		// without a jqFilter there is nothing else to keep.
		if _, set := b["keepFullObjectsInMemory"]; !set && b["jqFilter"] != nil {
			if _, isKube := in["kind"]; isKube {
				b["keepFullObjectsInMemory"] = false
			}
		}
		if _, ok := b["allowFailure"]; !ok && allowFailure != nil {
			b["allowFailure"] = allowFailure
		}
		out = append(out, b)
	}
	return out
}

// convertSettings turns the SDK's executionMinInterval (a Go duration in
// nanoseconds, or a duration string) into a duration string.
func convertSettings(in map[string]any) map[string]any {
	out := map[string]any{}
	switch v := in["executionMinInterval"].(type) {
	case float64:
		if v > 0 {
			out["executionMinInterval"] = time.Duration(v).String()
		}
	case string:
		out["executionMinInterval"] = v
	}
	if v, ok := in["executionBurst"].(float64); ok && v > 0 {
		out["executionBurst"] = v
	}
	return out
}
