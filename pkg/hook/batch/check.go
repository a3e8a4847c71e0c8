package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/addon-operator/addon-operator/pkg/hook/process"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// A batch binary built with the module SDK may carry a settings check
// (app.WithSettingsCheck), announced by "has_settings_check": true in its
// "hook config" document. The check is run as
//
//	hook check    with SETTINGS_PATH naming a JSON file that holds the
//	              module's settings: its configuration section, without
//	              the module key
//
// and answers by its exit code: 0 with nothing written accepts the
// settings; 1 with {"valid":...,"message":"...","warnings":[...]} on
// stderr rejects them (valid false, message why) or accepts them with
// warnings (valid true).

// settingsPathEnv names the settings file of "hook check".
const settingsPathEnv = "SETTINGS_PATH"

// SettingsCheckTimeout bounds one "hook check": it runs while an admission
// request waits, and the API server gives a webhook at most 30 s.
const SettingsCheckTimeout = 10 * time.Second

// SettingsCheckResult is what a settings check answered.
type SettingsCheckResult struct {
	Valid    bool     `json:"valid"`
	Message  string   `json:"message"`
	Warnings []string `json:"warnings"`
}

// HasSettingsCheck reports whether a "hook config" document announces
// a settings check.
func HasSettingsCheck(data []byte) bool {
	var doc struct {
		HasSettingsCheck bool `json:"has_settings_check"`
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return false
	}
	return json.Unmarshal(trimmed, &doc) == nil && doc.HasSettingsCheck
}

// fileStamp identifies one version of a file.
type fileStamp struct {
	size    int64
	modTime time.Time
}

func stampOf(path string) (fileStamp, error) {
	st, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{size: st.Size(), modTime: st.ModTime()}, nil
}

// checkEntry is what Checks remembers about one file: whether it has
// a settings check, and the last answer it gave, for settings of checksum.
type checkEntry struct {
	stamp    fileStamp
	has      bool
	checksum string
	result   *SettingsCheckResult
}

// Checks runs batch binaries' settings checks and remembers, by path,
// whether a file has one and its last answer (a checkEntry). The zero
// value is ready to use; it must not be copied after first use.
type Checks struct {
	mu      sync.Mutex
	entries map[string]checkEntry
}

func (s *Checks) get(path string, stamp fileStamp) (checkEntry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[path]
	return e, ok && e.stamp == stamp
}

func (s *Checks) put(path string, e checkEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries == nil {
		s.entries = map[string]checkEntry{}
	}
	s.entries[path] = e
}

// Has reports whether the file at path is a batch binary with a settings
// check. The answer is remembered until the file changes.
func (s *Checks) Has(ctx context.Context, x Exec, path string) (bool, error) {
	stamp, err := stampOf(path)
	if err != nil {
		return false, fmt.Errorf("stat hook: %w", err)
	}
	if known, ok := s.get(path, stamp); ok {
		return known.has, nil
	}
	out, err := Config(ctx, x, path)
	if err != nil {
		return false, err
	}
	has := HasSettingsCheck(out)
	s.put(path, checkEntry{stamp: stamp, has: has})
	return has, nil
}

// Cached is the answer Check would give for settings without running the
// check, when the file and the settings are those of the last answer.
func (s *Checks) Cached(path string, settings values.Values) (SettingsCheckResult, bool) {
	stamp, err := stampOf(path)
	if err != nil {
		return SettingsCheckResult{}, false
	}
	known, ok := s.get(path, stamp)
	if !ok || known.result == nil || known.checksum != values.Checksum(settings) {
		return SettingsCheckResult{}, false
	}
	return *known.result, true
}

// Check runs the settings check of the batch binary at path with
// settings (a module's configuration section). A check that rejects them
// is a result with Valid false, not an error; the error is for a check
// that could not run or answered something else. The last answer is
// remembered until the settings or the file change.
func (s *Checks) Check(ctx context.Context, x Exec, path string, settings values.Values) (SettingsCheckResult, error) {
	stamp, err := stampOf(path)
	if err != nil {
		return SettingsCheckResult{}, fmt.Errorf("stat hook: %w", err)
	}
	sum := values.Checksum(settings)
	known, ok := s.get(path, stamp)
	if ok && known.result != nil && known.checksum == sum {
		return *known.result, nil
	}
	res, err := run(ctx, x, path, settings)
	if err != nil {
		return SettingsCheckResult{}, err
	}
	known.stamp, known.has, known.checksum, known.result = stamp, true, sum, &res
	s.put(path, known)
	return res, nil
}

func run(ctx context.Context, x Exec, path string, settings values.Values) (SettingsCheckResult, error) {
	dir, err := os.MkdirTemp(x.TempDir, "settings-check-")
	if err != nil {
		return SettingsCheckResult{}, fmt.Errorf("create check dir: %w", err)
	}
	defer os.RemoveAll(dir)
	data := []byte("{}")
	if settings != nil {
		data, err = json.Marshal(settings)
	}
	if err != nil {
		return SettingsCheckResult{}, fmt.Errorf("encode settings: %w", err)
	}
	file := dir + "/settings.json"
	if err := process.WriteFile(file, data); err != nil {
		return SettingsCheckResult{}, fmt.Errorf("write settings: %w", err)
	}
	err = x.Run(ctx, process.Process{
		Path: path, Args: []string{"hook", "check"},
		Env:     slices.Concat(os.Environ(), x.Env, []string{settingsPathEnv + "=" + file}),
		Timeout: SettingsCheckTimeout, Logger: x.Logger.With(slog.String(logkey.Hook, path)), LogLimit: x.MaxLogBytes,
	})
	if err == nil {
		return SettingsCheckResult{Valid: true}, nil
	}
	var exit *process.ExitError
	if !errors.As(err, &exit) || exit.Code != 1 {
		return SettingsCheckResult{}, fmt.Errorf("hook check: %w", err)
	}
	// The answer is the last JSON object on stderr; log lines may come
	// before it.
	var res SettingsCheckResult
	lines := strings.Split(strings.TrimSpace(exit.Stderr), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		line := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var probe map[string]json.RawMessage
		if json.Unmarshal([]byte(line), &probe) != nil {
			continue
		}
		if _, ok := probe["valid"]; !ok {
			continue
		}
		if err := json.Unmarshal([]byte(line), &res); err != nil {
			return SettingsCheckResult{}, fmt.Errorf("hook check: decode answer: %w", err)
		}
		return res, nil
	}
	return SettingsCheckResult{}, fmt.Errorf("hook check: %w", err)
}
