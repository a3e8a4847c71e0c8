package metrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Action is what a HookMetric does to its series.
type Action string

// The actions of the METRICS_PATH protocol.
const (
	// ActionAdd adds Value (>= 0) to a counter.
	ActionAdd Action = "add"
	// ActionSet sets a gauge to Value.
	ActionSet Action = "set"
	// ActionObserve records Value in a histogram.
	ActionObserve Action = "observe"
	// ActionExpire removes every series of Group; Name is ignored.
	ActionExpire Action = "expire"
)

// HookMetric is one metric operation a hook wrote to METRICS_PATH.
type HookMetric struct {
	// Name is the metric name, exposed as is (no prefix).
	Name string
	// Group, when set, ties the series to a group that each batch carrying
	// the group replaces as a whole (see HookMetrics.Apply).
	Group  string
	Action Action
	Value  float64
	// Buckets are the histogram's upper bounds, strictly increasing; only
	// the first observe of a metric name sets them.
	Buckets []float64
	Labels  map[string]string
}

// ParseError reports a METRICS_PATH entry that cannot be used.
type ParseError struct {
	// Line is the 1-based line the entry (or the syntax error) is on.
	Line int
	// Field is the JSON field at fault, or empty for a syntax error.
	Field string
	Err   error
}

// Error names the line and the field, then the problem.
func (e *ParseError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("line %d: field %q: %v", e.Line, e.Field, e.Err)
}

// Unwrap returns the underlying problem.
func (e *ParseError) Unwrap() error { return e.Err }

// wireMetric is one METRICS_PATH entry as written. "add": n and "set": n
// are the reference's shortcuts for an action with its value.
type wireMetric struct {
	Name    string            `json:"name"`
	Group   string            `json:"group"`
	Action  Action            `json:"action"`
	Value   *float64          `json:"value"`
	Add     *float64          `json:"add"`
	Set     *float64          `json:"set"`
	Buckets []float64         `json:"buckets"`
	Labels  map[string]string `json:"labels"`
}

// ParseHookMetrics parses METRICS_PATH content: JSON objects one a line, or
// any stream of objects and arrays of objects. Empty content yields no
// metrics. Unknown fields are ignored, as the reference does. Every entry is
// validated; the error joins one *ParseError per bad entry (a syntax error
// stops parsing), and no metrics are returned with it.
func ParseHookMetrics(data []byte) ([]HookMetric, error) {
	var (
		out  []HookMetric
		errs []error
	)
	dec := json.NewDecoder(bytes.NewReader(data))
	depth := 0 // 1 inside a top-level array
	for {
		if depth == 1 && !dec.More() {
			if _, err := dec.Token(); err != nil { // the closing ']'
				return nil, syntaxError(data, dec, err)
			}
			depth = 0
			continue
		}
		start := skipSpace(data, int(dec.InputOffset()), depth == 1)
		if depth == 0 && start < len(data) && data[start] == '[' {
			if _, err := dec.Token(); err != nil {
				return nil, syntaxError(data, dec, err)
			}
			depth = 1
			continue
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, syntaxError(data, dec, err)
		}
		m, err := decodeEntry(raw, lineAt(data, start))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, m)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// decodeEntry decodes and validates one entry that starts on line.
func decodeEntry(raw json.RawMessage, line int) (HookMetric, error) {
	var w wireMetric
	if err := json.Unmarshal(raw, &w); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			return HookMetric{}, &ParseError{Line: line, Err: fmt.Errorf("want a JSON object, got a JSON %s", te.Value)}
		}
		if errors.As(err, &te) {
			return HookMetric{}, &ParseError{
				Line:  line + bytes.Count(raw[:min(int(te.Offset), len(raw))], []byte("\n")),
				Field: te.Field,
				Err:   fmt.Errorf("cannot use a JSON %s as %s", te.Value, te.Type),
			}
		}
		return HookMetric{}, &ParseError{Line: line, Err: err}
	}
	m, field, err := w.metric()
	if err != nil {
		return HookMetric{}, &ParseError{Line: line, Field: field, Err: err}
	}
	return m, nil
}

// metric resolves the shortcuts and validates the entry, naming the field
// at fault.
func (w *wireMetric) metric() (HookMetric, string, error) {
	m := HookMetric{Name: w.Name, Group: w.Group, Action: w.Action, Buckets: w.Buckets, Labels: w.Labels}
	value := w.Value
	for _, s := range []struct {
		field  string
		action Action
		value  *float64
	}{{"add", ActionAdd, w.Add}, {"set", ActionSet, w.Set}} {
		switch {
		case s.value == nil:
		case w.Add != nil && w.Set != nil:
			return m, "add", errors.New(`"add" and "set" are mutually exclusive`)
		case m.Action != "" && m.Action != s.action:
			return m, "action", fmt.Errorf("action %q contradicts the %q shortcut", m.Action, s.field)
		case value != nil:
			return m, "value", fmt.Errorf("value given twice, also as %q", s.field)
		default:
			m.Action, value = s.action, s.value
		}
	}
	if m.Action == "" {
		return m, "action", errors.New(`required: one of add, set, observe, expire (or the "add"/"set" shortcut)`)
	}
	switch {
	case value != nil:
		m.Value = *value
	case known(m.Action) && m.Action != ActionExpire:
		return m, "value", fmt.Errorf("required for action %q", m.Action)
	}
	field, err := m.check()
	return m, field, err
}

// syntaxError turns a decoder error into a *ParseError on its line.
func syntaxError(data []byte, dec *json.Decoder, err error) error {
	off := int(dec.InputOffset())
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off = int(se.Offset)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		off = len(data)
	}
	return &ParseError{Line: lineAt(data, off), Err: err}
}

// skipSpace returns the offset of the first byte at or after off that is
// not JSON whitespace (nor, inside an array, a separating comma).
func skipSpace(data []byte, off int, inArray bool) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\r', '\n':
		case ',':
			if !inArray {
				return off
			}
		default:
			return off
		}
		off++
	}
	return off
}

// lineAt returns the 1-based line of the byte at off.
func lineAt(data []byte, off int) int {
	return 1 + bytes.Count(data[:min(max(off, 0), len(data))], []byte("\n"))
}

// known reports whether a is one of the protocol's actions.
func known(a Action) bool {
	switch a {
	case ActionAdd, ActionSet, ActionObserve, ActionExpire:
		return true
	}
	return false
}
