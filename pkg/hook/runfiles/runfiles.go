// Package runfiles is the files of one run of the hook file protocol:
// which a run of each kind gets, under which environment variables, and
// reading what the run wrote to its outputs.
package runfiles

import (
	"path/filepath"
)

// Kind selects the protocol of a run.
type Kind int

// Run kinds.
const (
	// Hook runs a hook: binding contexts and values in, patches and
	// metrics out.
	Hook Kind = iota
	// EnabledScript runs a module's enabled script: values in,
	// MODULE_ENABLED_RESULT (and optionally MODULE_ENABLED_REASON) out. It
	// gets no binding contexts and no patch files, as in the reference.
	EnabledScript
	// Webhook runs a hook for one admission or conversion request: the
	// files of Hook plus the response files VALIDATING_RESPONSE_PATH
	// (also ADMISSION_RESPONSE_PATH) and CONVERSION_RESPONSE_PATH.
	Webhook
)

// The protocol's environment variables, each naming one file.
const (
	BindingContext    = "BINDING_CONTEXT_PATH"
	Values            = "VALUES_PATH"
	ConfigValues      = "CONFIG_VALUES_PATH"
	ValuesPatch       = "VALUES_JSON_PATCH_PATH"
	ConfigValuesPatch = "CONFIG_VALUES_JSON_PATCH_PATH"
	KubernetesPatch   = "KUBERNETES_PATCH_PATH"
	Metrics           = "METRICS_PATH"
	EnabledResult     = "MODULE_ENABLED_RESULT"
	EnabledReason     = "MODULE_ENABLED_REASON"
	ValidatingResp    = "VALIDATING_RESPONSE_PATH"
	AdmissionResp     = "ADMISSION_RESPONSE_PATH"
	ConversionResp    = "CONVERSION_RESPONSE_PATH"
)

// File is one file of a run, named to the process by the variable Env.
type File struct {
	Env  string
	Path string
}

// List lists the files in dir of a run of the given kind, inputs first.
func List(dir string, kind Kind) []File {
	names := []string{Values, ConfigValues, EnabledResult, EnabledReason}
	if kind == Hook || kind == Webhook {
		names = []string{
			BindingContext, Values, ConfigValues,
			ValuesPatch, ConfigValuesPatch, KubernetesPatch, Metrics,
		}
	}
	if kind == Webhook {
		names = append(names, AdmissionResp, ConversionResp)
	}
	files := make([]File, len(names))
	for i, n := range names {
		files[i] = File{Env: n, Path: filepath.Join(dir, n)}
	}
	if kind == Webhook {
		// The protocol's two names of one file.
		files = append(files, File{Env: ValidatingResp, Path: filepath.Join(dir, AdmissionResp)})
	}
	return files
}
