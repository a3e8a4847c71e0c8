package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Entry is one JSON log line of the operator.
type Entry struct {
	// Seen is when the harness read the line.
	Seen time.Time
	// Fields are the decoded attributes, with msg, time and level.
	Fields map[string]any
}

// Msg returns the line's message.
func (e Entry) Msg() string { s, _ := e.Fields["msg"].(string); return s }

// Str returns attribute key as a string, "" when missing or not a string.
func (e Entry) Str(key string) string { s, _ := e.Fields[key].(string); return s }

// Time returns the line's own timestamp, the zero time when unparsable.
func (e Entry) Time() time.Time {
	t, _ := time.Parse(time.RFC3339Nano, e.Str("time"))
	return t
}

// Duration returns attribute key, which slog's JSON handler writes in
// nanoseconds; ok is false when missing.
func (e Entry) Duration(key string) (time.Duration, bool) {
	f, ok := e.Fields[key].(float64)
	return time.Duration(f), ok
}

// Logbook collects the operator's log lines as they are written and lets
// callers wait for one. It is the io.Writer of the process's stderr; all of
// its state is guarded by mu.
type Logbook struct {
	mu      sync.Mutex
	partial []byte
	entries []Entry
	changed chan struct{} // closed and replaced on every new line or on close
	closed  error         // set once the process exited
	copyTo  io.Writer
}

// NewLogbook returns a Logbook that also copies every byte to copyTo.
func NewLogbook(copyTo io.Writer) *Logbook {
	return &Logbook{changed: make(chan struct{}), copyTo: copyTo}
}

// ErrExited is returned by Wait when the operator exits first.
var ErrExited = errors.New("operator exited")

// Write splits p into lines and records the JSON ones.
func (b *Logbook) Write(p []byte) (int, error) {
	now := time.Now()
	if _, err := b.copyTo.Write(p); err != nil {
		return 0, fmt.Errorf("copy operator log: %w", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.partial = append(b.partial, p...)
	for {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 {
			break
		}
		var fields map[string]any
		if json.Unmarshal(b.partial[:i], &fields) == nil {
			b.entries = append(b.entries, Entry{Seen: now, Fields: fields})
		}
		b.partial = b.partial[i+1:]
	}
	b.notify()
	return len(p), nil
}

// Close makes pending and later waits fail with ErrExited wrapping err.
func (b *Logbook) Close(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = ErrExited
	if err != nil {
		b.closed = fmt.Errorf("%w: %w", ErrExited, err)
	}
	b.notify()
}

func (b *Logbook) notify() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// Mark returns the number of lines so far, a cursor for Wait and Since.
func (b *Logbook) Mark() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.entries)
}

// Since returns the lines recorded from mark on.
func (b *Logbook) Since(mark int) []Entry {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Entry(nil), b.entries[min(mark, len(b.entries)):]...)
}

// Wait returns the first line from mark on that match accepts, waiting
// for it until ctx ends or the operator exits.
func (b *Logbook) Wait(ctx context.Context, mark int, match func(Entry) bool) (Entry, error) {
	for {
		b.mu.Lock()
		for ; mark < len(b.entries); mark++ {
			if match(b.entries[mark]) {
				e := b.entries[mark]
				b.mu.Unlock()
				return e, nil
			}
		}
		changed, closed := b.changed, b.closed
		b.mu.Unlock()
		if closed != nil {
			return Entry{}, closed
		}
		select {
		case <-ctx.Done():
			return Entry{}, ctx.Err()
		case <-changed:
		}
	}
}

// Message matches lines with message msg whose string attributes include
// attrs.
func Message(msg string, attrs ...string) func(Entry) bool {
	return func(e Entry) bool {
		if e.Msg() != msg {
			return false
		}
		for i := 0; i+1 < len(attrs); i += 2 {
			if e.Str(attrs[i]) != attrs[i+1] {
				return false
			}
		}
		return true
	}
}
