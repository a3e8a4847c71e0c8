package server

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
			out = append(out, msg)
		}
	}
	return out
}
