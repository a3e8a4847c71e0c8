package hook

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"

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

// collect reads and parses the output files of a finished run.
func collect(files []protocolFile, limit int64) (*Result, error) {
	res := &Result{}
	for _, f := range files {
		var err error
		switch f.env {
		case envValuesPatch:
			res.ValuesPatch, err = readPatch(f, limit)
		case envConfigValuesPatch:
			res.ConfigValuesPatch, err = readPatch(f, limit)
		case envKubernetesPatch:
			res.KubernetesPatch, err = readOutput(f, limit)
		case envMetrics:
			res.Metrics, err = readOutput(f, limit)
		case envEnabledResult:
			res.Enabled, err = readEnabled(f, limit)
		case envEnabledReason:
			var reason []byte
			reason, err = readOutput(f, limit)
			res.EnabledReason = string(reason)
		case envAdmissionResp:
			res.AdmissionResponse, err = readOutput(f, limit)
		case envConversionResp:
			res.ConversionResponse, err = readOutput(f, limit)
		}
		if err != nil {
			return nil, err
		}
	}
	return res, nil
}

func readPatch(f protocolFile, limit int64) (values.Patch, error) {
	data, err := readOutput(f, limit)
	if err != nil {
		return nil, err
	}
	patch, err := values.ParsePatch(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.env, err)
	}
	return patch, nil
}

// readEnabled reads MODULE_ENABLED_RESULT, which must say true or false.
func readEnabled(f protocolFile, limit int64) (*bool, error) {
	data, err := readOutput(f, limit)
	if err != nil {
		return nil, err
	}
	switch s := string(data); s {
	case "true", "false":
		enabled := s == "true"
		return &enabled, nil
	case "":
		return nil, fmt.Errorf("%s: want true or false, got nothing", f.env)
	default:
		if len(s) > 64 {
			s = s[:64] + "..."
		}
		return nil, fmt.Errorf("%s: want true or false, got %s", f.env, strconv.Quote(s))
	}
}

// readOutput reads an output file, trimmed of surrounding whitespace; an
// empty or missing file gives nil. Only regular files are read, so a hook
// cannot make the operator block on a FIFO or read a device.
func readOutput(f protocolFile, limit int64) ([]byte, error) {
	info, err := os.Lstat(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.env, err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", f.env)
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", f.env, limit)
	}
	if info.Size() == 0 {
		return nil, nil // most outputs of most runs: nothing to open
	}
	file, err := os.Open(f.path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.env, err)
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.env, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes", f.env, limit)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, nil
	}
	return data, nil
}
