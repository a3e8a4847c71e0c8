package server

import (
	"slices"

	"github.com/addon-operator/addon-operator/pkg/status"
)

// The server shows the source's texts (last errors, messages, conditions,
// problems) redacted with Options.Redact: they may quote what the API
// server quoted of a rejected Secret or of a sensitive value. The debug
// API's values, config and renders are what they are: they are served
// only to who may read them.

// redact returns text through Options.Redact, as it is without one.
func (s *Server) redact(text string) string {
	if s.opts.Redact == nil || text == "" {
		return text
	}
	return s.opts.Redact(text)
}

// modules returns the source's modules with their texts redacted.
func (s *Server) modules() []status.ModuleStatus {
	ms := slices.Clone(s.src.Modules())
	for i := range ms {
		m := &ms[i]
		m.LastError, m.Message, m.Reason, m.Remediation = s.redact(m.LastError), s.redact(m.Message), s.redact(m.Reason), s.redact(m.Remediation)
	}
	return ms
}

// queues returns the source's queues with their tasks' errors redacted.
func (s *Server) queues() []status.QueueStatus {
	qs := slices.Clone(s.src.QueueStatuses())
	for i := range qs {
		qs[i].Tasks = slices.Clone(qs[i].Tasks)
		for j := range qs[i].Tasks {
			t := &qs[i].Tasks[j]
			t.LastError, t.Description = s.redact(t.LastError), s.redact(t.Description)
		}
	}
	return qs
}

// conditions returns the source's conditions with their messages redacted.
func (s *Server) conditions() []status.Condition {
	cs := slices.Clone(s.src.Conditions())
	for i := range cs {
		cs[i].Message = s.redact(cs[i].Message)
	}
	return cs
}
