package server

import (
	"bytes"
	"context"
	_ "embed"
	"html/template"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// ModulePages is what a Source that implements it adds to the status
// page: each module's page at /modules/{name}, and the converge timeline.
// *operator.Operator is the real one; without it the module pages show
// what Source has.
type ModulePages interface {
	// ModuleRuns returns each module's recent runs.
	ModuleRuns() []status.ModuleRuns
	// ModuleDetail returns what a module's page shows beyond its status;
	// it is only called with names Source.Modules lists.
	ModuleDetail(ctx context.Context, name string) (status.ModuleDetail, error)
}

//go:embed module.html
var moduleHTML string

//go:embed page.css
var pageCSS string

// pageTemplate parses an embedded page with the shared style and the
// timeline; they are fixed at build time, so an error is a bug caught by
// every test.
func pageTemplate(name, text string) *template.Template {
	funcs := template.FuncMap{
		"utc": func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.UTC().Format("2006-01-02 15:04:05 UTC")
		},
		"legend": func() [][2]string {
			return [][2]string{
				{"step-" + status.StepRequirements, "waiting for requirements"}, {"step-" + status.StepBackoff, "backoff"},
				{"step-" + status.StepHooks, "hooks"}, {"step-" + status.StepHelm, "Helm"},
				{"step-" + status.StepReadiness, "waiting for readiness"}, {"failed", "failed"},
			}
		},
		"relative": relative,
		"rfc3339":  rfc3339,
		"when":     when,
		"duration": func(start, end time.Time) string {
			if start.IsZero() || end.IsZero() {
				return ""
			}
			return end.Sub(start).Round(time.Millisecond).String()
		},
	}
	t := template.Must(template.New(name).Funcs(funcs).Parse(text))
	template.Must(t.New("style").Parse(`{{define "style"}}<style>` + pageCSS + `</style>{{end}}`))
	template.Must(t.New("timeline").Parse(timelineHTML))
	return t
}

// timelineHTML draws a timeline: a row per module of an inline SVG
// scaled to the page's width, its name above it as text that does not
// scale, and a legend.
const timelineHTML = `{{define "timeline"}}<div class="timeline">
<p class="tl-axis">From {{utc .Start}} to {{utc .End}} ({{.Span}})</p>
{{- range .Rows}}
<div class="tl-row" id="timeline-{{.Module}}"><a class="tl-name" href="/modules/{{.Module}}">{{.Module}}</a>
<svg class="tl-bars" viewBox="0 0 1000 10" preserveAspectRatio="none" role="img" aria-label="runs of {{.Module}}">
{{- range .Bars}}<rect class="step-{{.Step}}{{if .Failed}} failed{{end}}" x="{{.X}}" y="0" width="{{.Width}}" height="10"><title>{{.Title}}</title></rect>{{end -}}
</svg></div>
{{- else}}
<p class="tl-empty">No module has run yet.</p>
{{- end}}
<p class="tl-legend">
{{- range $k := legend}} <span class="item"><span class="key {{index $k 0}}"></span>{{index $k 1}}</span>{{end -}}
</p>
</div>{{end}}`

// moduleData is what module.html renders.
type moduleData struct {
	Module         status.ModuleStatus
	Detail         status.ModuleDetail
	Timeline       timeline
	RefreshSeconds int
	// Now is when the page is rendered, what relative times count from.
	Now time.Time
}

// modulePage renders one module's page: 404 for a module the source does
// not list.
func (s *Server) modulePage(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	mods := s.modules()
	i := slices.IndexFunc(mods, func(m status.ModuleStatus) bool { return m.Name == name })
	if i < 0 {
		writeText(w, http.StatusNotFound, "no module "+name)
		return
	}
	data := moduleData{Module: mods[i], RefreshSeconds: refreshSeconds, Now: time.Now()}
	if p, ok := s.src.(ModulePages); ok {
		d, err := p.ModuleDetail(r.Context(), name)
		if err != nil {
			s.log.Warn("module page failed", slog.String(logkey.Module, name), logkey.Err(err))
			d.Errors = append(d.Errors, err.Error())
		}
		data.Detail = s.redactDetail(d)
		data.Timeline = buildTimeline([]status.ModuleRuns{{Module: name, Runs: data.Detail.Runs}}, []string{name}, data.Now)
	}
	var buf bytes.Buffer
	if err := s.modulePageTmpl.Execute(&buf, data); err != nil {
		s.log.Warn("module page failed", slog.String(logkey.Module, name), logkey.Err(err))
		writeText(w, http.StatusInternalServerError, "render module page: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(buf.Bytes())
}

// timeline returns every module's runs as the overview draws them.
func (s *Server) timeline(mods []status.ModuleStatus) *timeline {
	p, ok := s.src.(ModulePages)
	if !ok {
		return nil
	}
	order := make([]string, 0, len(mods))
	for i := range mods {
		order = append(order, mods[i].Name)
	}
	t := buildTimeline(p.ModuleRuns(), order, time.Now())
	return &t
}

// redactDetail returns d with every text that may quote a secret
// redacted.
func (s *Server) redactDetail(d status.ModuleDetail) status.ModuleDetail {
	d.Runs = slices.Clone(d.Runs)
	for i := range d.Runs {
		d.Runs[i].Error = s.redact(d.Runs[i].Error)
	}
	d.Events = slices.Clone(d.Events)
	for i := range d.Events {
		d.Events[i].Message = s.redact(d.Events[i].Message)
	}
	d.Objects = slices.Clone(d.Objects)
	for i := range d.Objects {
		d.Objects[i].Message = s.redact(d.Objects[i].Message)
	}
	d.Revisions = slices.Clone(d.Revisions)
	for i := range d.Revisions {
		d.Revisions[i].Description = s.redact(d.Revisions[i].Description)
	}
	if d.Drift != nil {
		dc := *d.Drift
		dc.Error = s.redact(dc.Error)
		d.Drift = &dc
	}
	d.Errors = slices.Clone(d.Errors)
	for i := range d.Errors {
		d.Errors[i] = s.redact(d.Errors[i])
	}
	return d
}
