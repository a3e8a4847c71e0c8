// Package batch runs batch binaries, native executables carrying several
// hooks (the module SDK's and pkg/sdk's): recognising them ("hook list"),
// reading their configuration ("hook config") and converting each hook's
// to a v1 hook configuration, their readiness probe's queue, and their
// settings check ("hook check") with its remembered answers.
package batch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"time"

	"github.com/addon-operator/addon-operator/pkg/hook/process"
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

// Exec is how batch binaries are run: by their owner's process runner,
// with its settings.
type Exec struct {
	// Run runs a process with the owner's timeout, grace period and
	// warnings.
	Run func(context.Context, process.Process) error
	// Env is added to the operator's environment.
	Env []string
	// Logger receives the output lines; it must not be nil.
	Logger *slog.Logger
	// MaxOutput limits the configuration output, in bytes.
	MaxOutput int64
	// MaxLogBytes bounds the output lines logged for one run.
	MaxLogBytes int64
	// TempDir is where a settings check's directory is created.
	TempDir string
}

// batchProbeTimeout bounds "hook list": a native executable that is not a
// batch hook and ignores its arguments must not hold up module loading.
const batchProbeTimeout = 30 * time.Second

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

// Config returns what the batch binary at path prints for "hook
// config", or nil when path is not a batch binary: not a native executable,
// or one that does not answer "hook list" with "Found N items" (N > 0).
// Such a file is a plain hook and is asked --config as usual.
func Config(ctx context.Context, x Exec, path string) ([]byte, error) {
	native, err := IsNative(path)
	if err != nil || !native {
		return nil, err
	}
	list := &process.LimitedBuffer{Limit: x.MaxOutput}
	err = x.Run(ctx, process.Process{
		Path: path, Args: []string{"hook", "list"}, Env: slices.Concat(os.Environ(), x.Env),
		Timeout: batchProbeTimeout, Logger: slog.New(slog.DiscardHandler), Stdout: list,
	})
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil || !batchListed.Match(list.Buf) {
		// A plain native hook may exit non-zero on arguments it does not
		// know; that only means it is not a batch binary.
		return nil, nil //nolint:nilerr // not a batch binary: the caller asks --config instead
	}
	out := &process.LimitedBuffer{Limit: x.MaxOutput}
	err = x.Run(ctx, process.Process{
		Path: path, Args: []string{"hook", "config"}, Env: slices.Concat(os.Environ(), x.Env),
		Logger: x.Logger.With(slog.String(logkey.Hook, path)), Stdout: out, LogLimit: x.MaxLogBytes,
	})
	if err != nil {
		return nil, fmt.Errorf("run hook config: %w", err)
	}
	if out.Overflow {
		return nil, fmt.Errorf("hook config output larger than %d bytes", out.Limit)
	}
	return out.Buf, nil
}

// ConvertSDK converts one hook configuration of a batch binary, as the
// module SDK writes it, into a shell-operator v1 configuration: the
// lifecycle keys (every one kept, so that the parser names one that does
// not fit the hook's kind), schedule and kubernetes bindings (convertList)
// and settings (convertSettings).
func ConvertSDK(sdk map[string]any, lifecycle []string) map[string]any {
	v1 := map[string]any{"configVersion": "v1"}
	for _, b := range lifecycle {
		if v, ok := sdk[b]; ok && v != nil {
			v1[b] = v
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
	return v1
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
