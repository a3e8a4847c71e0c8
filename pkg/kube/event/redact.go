package event

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
)

// WithRedactor makes the recorder pass every Event's note through redact
// before it is recorded: a failure's note may quote what the API server
// quoted of a rejected Secret, and whoever may list Events must not read
// it (*redact.Redactor.String). Call it before Run.
func (r *Recorder) WithRedactor(redact func(string) string) *Recorder {
	r.recorder = redactingRecorder{next: r.recorder, redact: redact}
	r.redact = redact
	return r
}

// redactingRecorder formats each note and redacts it.
type redactingRecorder struct {
	next   events.EventRecorder
	redact func(string) string
}

func (r redactingRecorder) Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.next.Eventf(regarding, related, eventtype, reason, action, "%s", r.redact(fmt.Sprintf(note, args...)))
}

// redactErr returns err with its text redacted, before a note cuts it:
// a secret cut in two would no longer be found whole.
func (r *Recorder) redactErr(err error) error {
	if r.redact == nil || err == nil {
		return err
	}
	return errors.New(r.redact(err.Error()))
}
