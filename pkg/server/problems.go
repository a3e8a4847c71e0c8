package server

import "strings"

// Problem reports a condition outside the operator that keeps it from doing
// its work, such as the Kubernetes API server being unreachable
// (*apihealth.Tracker). Problem returns "" while there is none; it is called
// from request goroutines and must be safe for concurrent use.
type Problem interface {
	Problem() string
}

// problems returns the problems of Options.Problems that hold now.
func (s *Server) problems() []string {
	var out []string
	for _, p := range s.opts.Problems {
		if msg := p.Problem(); msg != "" {
			out = append(out, s.redact(msg))
		}
	}
	return out
}

// warnings are what /readyz names besides "ok", one line each: the
// problems that make the operator unready (an unreachable API server),
// then the conditions it works around (a deleted or rejected ConfigMap,
// foreign releases). The debug CLI prints them next to its listings, so
// that "everything disabled, queues idle" is never all it shows.
func (s *Server) warnings() []string {
	out := append([]string{}, s.problems()...)
	for _, c := range s.conditions() {
		line := c.Type + ": " + c.Message
		if len(c.Releases) > 0 {
			line += " (releases: " + strings.Join(c.Releases, ", ") + ")"
		}
		out = append(out, line)
	}
	return out
}
