package runfiles

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"

	"github.com/addon-operator/addon-operator/pkg/hook/process"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// Result is what a successful run wrote to its output files. Empty outputs
// leave the fields empty (nil or a zero-length Patch).
type Result struct {
	// ValuesPatch is the patch for in-memory values (VALUES_JSON_PATCH_PATH),
	// parsed but neither applied nor checked against the allowed roots.
	ValuesPatch values.Patch
	// ConfigValuesPatch is the patch for config values
	// (CONFIG_VALUES_JSON_PATCH_PATH), parsed likewise.
	ConfigValuesPatch values.Patch
	// KubernetesPatch holds the raw object operations (KUBERNETES_PATCH_PATH).
	KubernetesPatch []byte
	// Metrics holds the raw metric operations, one JSON object a line
	// (METRICS_PATH).
	Metrics []byte
	// Enabled is the answer of an enabled script; nil for hooks.
	Enabled *bool
	// EnabledReason is the optional text an enabled script wrote to
	// MODULE_ENABLED_REASON, trimmed.
	EnabledReason string
	// AdmissionResponse and ConversionResponse are what a webhook run wrote
	// to ADMISSION_RESPONSE_PATH (VALIDATING_RESPONSE_PATH) and
	// CONVERSION_RESPONSE_PATH, unparsed; nil when empty.
	AdmissionResponse  []byte
	ConversionResponse []byte
}

// Collect reads and parses the output files of a finished run; limit
// bounds each file's size in bytes.
func Collect(files []File, limit int64) (*Result, error) {
	res := &Result{}
	for _, f := range files {
		var err error
		switch f.Env {
		case ValuesPatch:
			res.ValuesPatch, err = readPatch(f, limit)
		case ConfigValuesPatch:
			res.ConfigValuesPatch, err = readPatch(f, limit)
		case KubernetesPatch:
			res.KubernetesPatch, err = readOutput(f, limit)
		case Metrics:
			res.Metrics, err = readOutput(f, limit)
		case EnabledResult:
			res.Enabled, err = readEnabled(f, limit)
		case EnabledReason:
			var reason []byte
			reason, err = readOutput(f, limit)
			res.EnabledReason = string(reason)
		case AdmissionResp:
			res.AdmissionResponse, err = readOutput(f, limit)
		case ConversionResp:
			res.ConversionResponse, err = readOutput(f, limit)
		}
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

// Failed is what a run returns beside the error of a hook process that
// ran and failed: its object operations (KUBERNETES_PATCH_PATH) alone, as
// the protocol lets a failing hook still update status subresources it
// marked ignoreHookError. Every other output of a failed run is dropped.
// A run that timed out, was cancelled or did not start returns nil.
func Failed(files []File, limit int64, err error) *Result {
	var exit *process.ExitError
	if !errors.As(err, &exit) || exit.Signal != 0 {
		return nil
	}
	for _, f := range files {
		if f.Env != KubernetesPatch {
			continue
		}
		data, readErr := readOutput(f, limit)
		if readErr != nil || len(data) == 0 {
			return nil
		}
		return &Result{KubernetesPatch: data}
	}
	return nil
}

func readPatch(f File, limit int64) (values.Patch, error) {
	data, err := readOutput(f, limit)
	if err != nil {
		return nil, err
	}
	patch, err := values.ParsePatch(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Env, err)
	}
	return patch, nil
}

// readEnabled reads MODULE_ENABLED_RESULT, which must say true or false.
func readEnabled(f File, limit int64) (*bool, error) {
	data, err := readOutput(f, limit)
	if err != nil {
		return nil, err
	}
	switch s := string(data); s {
	case "true", "false":
		enabled := s == "true"
		return &enabled, nil
	case "":
		return nil, fmt.Errorf("%s: want true or false, got nothing", f.Env)
	default:
		if len(s) > 64 {
			s = s[:64] + "..."
		}
		return nil, fmt.Errorf("%s: want true or false, got %s", f.Env, strconv.Quote(s))
	}
}

// readOutput reads an output file, trimmed of surrounding whitespace; an
// empty or missing file gives nil. Only regular files are read, so a hook
// cannot make the operator block on a FIFO or read a device.
func readOutput(f File, limit int64) ([]byte, error) {
	info, err := os.Lstat(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Env, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", f.Env)
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", f.Env, limit)
	}
	if info.Size() == 0 {
		return nil, nil // most outputs of most runs: nothing to open
	}
	file, err := os.Open(f.Path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Env, err)
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Env, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", f.Env, limit)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, nil
	}
	return data, nil
}
