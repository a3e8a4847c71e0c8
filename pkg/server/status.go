package server

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"net/http"
	"strings"

	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/status"
)

//go:embed status.html
var statusHTML string

// refreshSeconds is how often the status page reloads itself.
const refreshSeconds = 5

// statusData is what status.html renders.
type statusData struct {
	Ready bool
	// Failing names the enabled modules whose last run failed: the header
	// says so rather than "Ready".
	Failing        []string
	Problems       []string
	RefreshSeconds int
	Conditions     []status.Condition
	Modules        []status.ModuleStatus
	Queues         []status.QueueStatus
	// Timeline is drawn when the source keeps module runs.
	Timeline *timeline
}

// statusTemplate parses the embedded status page; it is fixed at build
// time, so an error is a bug caught by every test.
func statusTemplate() *template.Template {
	return pageTemplate("status", statusHTML)
}

// statusPage renders every module and queue as server-side HTML.
func (s *Server) statusPage(w http.ResponseWriter, _ *http.Request) {
	data := statusData{
		Ready:          s.src.Ready(),
		Problems:       s.problems(),
		RefreshSeconds: refreshSeconds,
		Conditions:     s.conditions(),
		Modules:        s.modules(),
		Queues:         s.queues(),
	}
	data.Timeline = s.timeline(data.Modules)
	for i := range data.Modules {
		if m := &data.Modules[i]; m.Enabled && m.Phase == status.PhaseFailed {
			data.Failing = append(data.Failing, m.Name)
		}
	}
	var buf bytes.Buffer
	if err := s.page.Execute(&buf, data); err != nil {
		s.log.Warn("status page failed", logkey.Err(err))
		writeText(w, http.StatusInternalServerError, "render status page: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// readyz answers 503 until the first converge has finished, then 200. A
// condition the operator works around (a deleted or rejected ConfigMap:
// the last valid configuration stays in force; releases left in place as
// not its own, named) is named in the body, one line each, but keeps the
// answer 200: the operator still does its work,
// and an unready pod would only stall rollouts and drop the status page
// from its Service, without making the ConfigMap come back.
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	if p := s.problems(); len(p) > 0 {
		writeText(w, http.StatusServiceUnavailable, strings.Join(p, "\n"))
		return
	}
	if !s.src.Ready() {
		writeText(w, http.StatusServiceUnavailable, "the first converge has not finished")
		return
	}
	var b strings.Builder
	b.WriteString("ok")
	for _, c := range s.conditions() {
		fmt.Fprintf(&b, "\nwarning: %s: %s", c.Type, c.Message)
		if len(c.Releases) > 0 {
			fmt.Fprintf(&b, " (releases: %s)", strings.Join(c.Releases, ", "))
		}
	}
	writeText(w, http.StatusOK, b.String())
}
