// Package event records Kubernetes Events about modules, and holds them
// through an API server outage.
package event

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
)

// Event reasons the operator records.
const (
	ReasonModuleFailed    = "ModuleRunFailed"
	ReasonModuleRecovered = "ModuleRecovered"
	ReasonObjectDrifted   = "ObjectDrifted"
	// ReasonReleaseRecordDeleted: a module's Helm release record (its
	// storage Secret or ConfigMap) was deleted, and its history with it.
	ReasonReleaseRecordDeleted = "ReleaseRecordDeleted"
)

// heldEventsRetry is how often held Events are tried again when nobody
// says the API server is back (Resume): client-go's own pace.
const heldEventsRetry = 10 * time.Second

// Recorder records Kubernetes Events about modules in the operator's
// namespace, regarding the operator's ConfigMap (the object users edit).
// Events the API server cannot take (an outage) are held, a bounded number,
// and sent when it can again. Run owns the broadcaster's goroutines and the
// sending of held Events.
type Recorder struct {
	broadcaster events.EventBroadcaster
	recorder    events.EventRecorder
	regarding   *corev1.ConfigMap
	sink        *heldSink
	resume      chan struct{}
	// moduleRef, when set, names a module's Module object: each Event
	// about a module is recorded regarding it too.
	moduleRef func(module string) (*corev1.ObjectReference, bool)
	// redact, when set, removes secrets from notes (WithRedactor).
	redact func(string) string
	// recent are the last Events about each module, for the status page.
	recent recentEvents
}

// NewRecorder returns a recorder whose events regard the ConfigMap
// namespace/name; nothing is sent before Run.
func NewRecorder(client kubernetes.Interface, namespace, configMap string) *Recorder {
	sink := newHeldSink(&events.EventSinkImpl{Interface: client.EventsV1()})
	b := events.NewBroadcaster(sink)
	return &Recorder{
		broadcaster: b,
		recorder:    b.NewRecorder(scheme.Scheme, "addon-operator"),
		regarding:   &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: configMap}},
		sink:        sink,
		resume:      make(chan struct{}, 1),
	}
}

// WithMetrics makes the recorder report held and dropped Events to m;
// call it before Run.
func (r *Recorder) WithMetrics(m eventMetrics) *Recorder {
	r.sink.metrics = m
	return r
}

// WithModuleRefs makes the recorder record each Event about a module
// regarding the module's Module object too, when ref names one, so that
// kubectl describe module shows it; call it before Run.
func (r *Recorder) WithModuleRefs(ref func(module string) (*corev1.ObjectReference, bool)) *Recorder {
	r.moduleRef = ref
	return r
}

// moduleEvent records an Event about a module: regarding the ConfigMap,
// and regarding the module's object when there is one.
func (r *Recorder) moduleEvent(module, typ, reason, action, note string) {
	r.recent.add(module, typ, reason, note)
	r.recorder.Eventf(r.regarding, nil, typ, reason, action, "%s", note)
	if r.moduleRef == nil {
		return
	}
	if ref, ok := r.moduleRef(module); ok {
		r.recorder.Eventf(ref, nil, typ, reason, action, "%s", note)
	}
}

// Resume says the API server answers again: held Events are sent now
// rather than at the next retry.
func (r *Recorder) Resume() {
	select {
	case r.resume <- struct{}{}:
	default:
	}
}

// Run sends recorded events until ctx ends. Held Events are sent on
// Resume, and every heldEventsRetry while some are held; none are left to
// send at the end are lost.
func (r *Recorder) Run(ctx context.Context) error {
	if err := r.broadcaster.StartRecordingToSinkWithContext(ctx); err != nil {
		return fmt.Errorf("start event broadcaster: %w", err)
	}
	defer r.broadcaster.Shutdown()
	var retry <-chan time.Time // armed only while Events are held
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-r.sink.held:
			if retry == nil {
				retry = time.After(heldEventsRetry)
			}
			continue
		case <-r.resume:
		case <-retry:
		}
		retry = nil
		if r.sink.flush(ctx) > 0 {
			retry = time.After(heldEventsRetry)
		}
	}
}

// ModuleFailed records a Warning that a module's run failed.
func (r *Recorder) ModuleFailed(module string, err error) {
	r.moduleEvent(module, corev1.EventTypeWarning, ReasonModuleFailed, "Run", failureNote(module, r.redactErr(err)))
}

// failureNote names the module once: errors of a module run often start
// with "module NAME: " or "module NAME hook ...", which then stands alone.
func failureNote(module string, err error) string {
	msg := err.Error()
	for _, name := range []string{module, strconv.Quote(module)} {
		rest, ok := strings.CutPrefix(msg, "module "+name)
		if ok && (strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, " ")) {
			return truncate(msg, 900)
		}
	}
	return "module " + module + ": " + truncate(msg, 900)
}

// ModuleRecovered records that a module ran successfully after failures.
func (r *Recorder) ModuleRecovered(module string, failures int) {
	r.moduleEvent(module, corev1.EventTypeNormal, ReasonModuleRecovered, "Run",
		fmt.Sprintf("module %s recovered after %d failed runs", module, failures))
}

// ObjectDrifted records a Warning that a release object's live state
// differs from the release, naming the fields, never their values.
func (r *Recorder) ObjectDrifted(module, object string, fields []string, reverted bool) {
	action := "reported"
	if reverted {
		action = "reverted"
	}
	r.moduleEvent(module, corev1.EventTypeWarning, ReasonObjectDrifted, "Drift",
		fmt.Sprintf("module %s: %s drifted in %s (%s)", module, object, truncate(strings.Join(fields, ", "), 600), action))
}

// ReleaseRecordDeleted records a Warning that a module's release record
// was deleted: its history is lost, and the release is installed again.
func (r *Recorder) ReleaseRecordDeleted(module, record string) {
	r.moduleEvent(module, corev1.EventTypeWarning, ReasonReleaseRecordDeleted, "Heal",
		fmt.Sprintf("module %s: release record %s deleted, release history lost; installing the release again", module, record))
}

// truncate keeps an event note within the API's limit.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
