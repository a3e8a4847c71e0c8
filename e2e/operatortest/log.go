package operatortest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// ErrExited is returned by Log.Wait when the operator exited without
// logging a matching line.
var ErrExited = errors.New("operator exited")

// Line is one JSON log line of the operator.
type Line struct {
	Msg string
	// Time is the operator's timestamp of the line, zero when it has none.
	Time time.Time
	// Fields are all the line's fields, msg, time and level included.
	Fields map[string]any
}

// Attr returns field key as a string, "" when the line lacks it.
func (l Line) Attr(key string) string {
	v, ok := l.Fields[key]
	if !ok {
		return ""
	}
	return fmt.Sprint(v)
}

// matches reports whether the line has message msg and, for every key of
// attrs, a field whose string form contains the value.
func (l Line) matches(msg string, attrs map[string]string) bool {
	if l.Msg != msg {
		return false
	}
	for k, v := range attrs {
		if !strings.Contains(l.Attr(k), v) {
			return false
		}
	}
	return true
}

// Log is the output of one run of the operator: everything it wrote, and
// the JSON lines among it as they come. It is safe for concurrent use.
type Log struct {
	mu      sync.Mutex
	raw     bytes.Buffer
	copyTo  io.Writer // nil, or Options.Output
	partial []byte    // an unfinished last line
	lines   []Line
	changed chan struct{} // closed and replaced when lines grow or the run exits
	exit    error         // set once the run has exited and its output is in
}

func newLog(copyTo io.Writer) *Log {
	return &Log{copyTo: copyTo, changed: make(chan struct{})}
}

// Lines returns the JSON lines so far.
func (l *Log) Lines() []Line {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lines[:len(l.lines):len(l.lines)]
}

// String returns everything the run wrote so far, JSON or not.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.raw.String()
}

// Wait returns the index in Lines of the first line from index from on
// that match accepts, waiting for it until ctx ends or the run exits
// (ErrExited).
func (l *Log) Wait(ctx context.Context, from int, match func(Line) bool) (int, error) {
	for {
		l.mu.Lock()
		lines, changed, exit := l.lines, l.changed, l.exit
		l.mu.Unlock()
		for i := from; i < len(lines); i++ {
			if match(lines[i]) {
				return i, nil
			}
		}
		from = max(from, len(lines))
		if exit != nil {
			return 0, exit
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return 0, context.Cause(ctx)
		}
	}
}

// write records output of the run; the process's stdout and stderr are
// connected to it through logWriter. A failing copy does not stop the
// recording: the copy is for people, the lines are for the test.
func (l *Log) write(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.raw.Write(p)
	if l.copyTo != nil {
		_, _ = l.copyTo.Write(p)
	}
	l.partial = append(l.partial, p...)
	grew := false
	for {
		line, rest, found := bytes.Cut(l.partial, []byte("\n"))
		if !found {
			break
		}
		grew = l.add(line) || grew
		l.partial = rest
	}
	if grew {
		l.notify()
	}
}

// close records the run's exit, after its last output: an unfinished last
// line counts, and waits end with ErrExited.
func (l *Log) close(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.add(l.partial)
	l.partial = nil
	l.exit = ErrExited
	if err != nil {
		l.exit = fmt.Errorf("%w: %w", ErrExited, err)
	}
	l.notify()
}

// add appends line to lines if it is a JSON object; the caller holds mu.
func (l *Log) add(line []byte) bool {
	var fields map[string]any
	if json.Unmarshal(line, &fields) != nil || fields == nil {
		return false
	}
	msg, _ := fields["msg"].(string)
	at, _ := fields["time"].(string)
	parsed, _ := time.Parse(time.RFC3339Nano, at)
	l.lines = append(l.lines, Line{Msg: msg, Time: parsed, Fields: fields})
	return true
}

func (l *Log) notify() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// logWriter is the io.Writer side of a Log, given to the process only.
type logWriter struct{ log *Log }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.write(p)
	return len(p), nil
}
