package event

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Event reasons about the ConfigMap itself. Events regard the ConfigMap by
// namespace and name, so `kubectl get events -n <namespace>` lists them
// also while it does not exist.
const (
	ReasonConfigMapDeleted   = "ConfigMapDeleted"
	ReasonConfigMapRecreated = "ConfigMapRecreated"
	ReasonConfigRejected     = "ConfigRejected"
	ReasonConfigHeld         = "ConfigHeld"
)

// ConfigMapDeleted records a Warning that the ConfigMap was deleted while
// the operator runs; kept says the last valid configuration stays in force.
func (r *Recorder) ConfigMapDeleted(kept bool) {
	note := "ConfigMap deleted; the last valid configuration stays in force until it is recreated"
	if !kept {
		note = "ConfigMap deleted; an empty configuration is applied"
	}
	r.recorder.Eventf(r.regarding, nil, corev1.EventTypeWarning, ReasonConfigMapDeleted, "Watch", "%s", note)
}

// ConfigMapRecreated records that the ConfigMap exists again.
func (r *Recorder) ConfigMapRecreated() {
	r.recorder.Eventf(r.regarding, nil, corev1.EventTypeNormal, ReasonConfigMapRecreated, "Watch",
		"ConfigMap recreated; its content applies")
}

// ConfigRejected records a Warning that the ConfigMap's content was
// rejected, naming the wrong keys.
func (r *Recorder) ConfigRejected(keys []string, err error) {
	r.recorder.Eventf(r.regarding, nil, corev1.EventTypeWarning, ReasonConfigRejected, "Parse",
		"keys %s rejected: %s", truncate(strings.Join(keys, ", "), 200), truncate(err.Error(), 700))
}

// ConfigHeld records a Warning that the last accepted configuration is
// held instead of what its source says; reason is one of the config
// package's Hold reasons, note says what ends it.
func (r *Recorder) ConfigHeld(reason, note string) {
	r.recorder.Eventf(r.regarding, nil, corev1.EventTypeWarning, ReasonConfigHeld, "Hold",
		"%s: %s", reason, truncate(note, 700))
}
