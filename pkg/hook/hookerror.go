package hook

import "errors"

// failedOutputs is what Run returns beside the error of a hook process that
// ran and failed: its object operations (KUBERNETES_PATCH_PATH) alone, as
// the protocol lets a failing hook still update status subresources it
// marked ignoreHookError. Every other output of a failed run is dropped.
// A run that timed out, was cancelled or did not start returns nil.
func failedOutputs(files []protocolFile, limit int64, err error) *Result {
	var exit *ExitError
	if !errors.As(err, &exit) || exit.Signal != 0 {
		return nil
	}
	for _, f := range files {
		if f.env != envKubernetesPatch {
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
