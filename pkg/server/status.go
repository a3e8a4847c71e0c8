package server

import (
	"bytes"
	_ "embed"
	"html/template"
	"log/slog"
	"net/http"

	"github.com/addon-operator/addon-operator/pkg/status"
)

//go:embed status.html
var statusHTML string

// refreshSeconds is how often the status page reloads itself.
const refreshSeconds = 5

// statusData is what status.html renders.
type statusData struct {
	Ready          bool
	Problems       []string
	RefreshSeconds int
	Modules        []status.ModuleStatus
	Queues         []status.QueueStatus
}

// statusTemplate parses the embedded status page; it is fixed at build
// time, so an error is a bug caught by every test.
func statusTemplate() *template.Template {
	return template.Must(template.New("status").Parse(statusHTML))
}

// statusPage renders every module and queue as server-side HTML.
func (s *Server) statusPage(w http.ResponseWriter, _ *http.Request) {
	data := statusData{
		Ready:          s.src.Ready(),
		Problems:       s.problems(),
		RefreshSeconds: refreshSeconds,
		Modules:        s.src.Modules(),
		Queues:         s.src.QueueStatuses(),
	}
	var buf bytes.Buffer
	if err := s.page.Execute(&buf, data); err != nil {
		s.log.Warn("status page failed", slog.Any("error", err))
		writeText(w, http.StatusInternalServerError, "render status page: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}
