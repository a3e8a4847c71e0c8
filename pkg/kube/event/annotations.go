package event

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// ReasonAnnotationsIgnored is the reason of the Event that a module's
// chart carries deploy annotations of nelm (werf.io/...) that Helm, which
// applies the operator's releases, does not act on.
const ReasonAnnotationsIgnored = "AnnotationsIgnored"

// AnnotationsIgnored records a Warning naming the nelm annotations of a
// module's chart that its release ignores.
func (r *Recorder) AnnotationsIgnored(module string, annotations []string) {
	r.moduleEvent(module, corev1.EventTypeWarning, ReasonAnnotationsIgnored, "Deploy",
		fmt.Sprintf("module %s: chart annotations of nelm ignored, Helm applies the release: %s", module, truncate(strings.Join(annotations, "; "), 800)))
}
