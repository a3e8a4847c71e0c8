package event

import corev1 "k8s.io/api/core/v1"

// ReasonReleaseRemediated is the reason of the Event that a module's failed
// release was rolled back or uninstalled after failed deployments.
const ReasonReleaseRemediated = "ReleaseRemediated"

// ReleaseRemediated records a Warning that a module's release was put back
// into a working state: note says what was done and why.
func (r *Recorder) ReleaseRemediated(module, note string) {
	r.recorder.Eventf(r.regarding, nil, corev1.EventTypeWarning, ReasonReleaseRemediated, "Remediate",
		"module %s: %s", module, truncate(note, 900))
}
