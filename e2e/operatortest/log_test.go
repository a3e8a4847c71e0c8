package operatortest

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLogLines(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		closed bool
		want   []string // messages
	}{
		{"whole lines", []string{`{"msg":"a"}` + "\n" + `{"msg":"b"}` + "\n"}, false, []string{"a", "b"}},
		{"split line", []string{`{"msg":`, `"a"}` + "\n"}, false, []string{"a"}},
		{"unfinished line waits", []string{`{"msg":"a"}`}, false, []string{}},
		{"unfinished line counts at exit", []string{`{"msg":"a"}`}, true, []string{"a"}},
		{"not JSON is skipped", []string{"Error: lease lost\n[]\n" + `{"msg":"a"}` + "\n"}, false, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var copied bytes.Buffer
			l := newLog(&copied)
			for _, w := range tt.writes {
				l.write([]byte(w))
			}
			if tt.closed {
				l.close(nil)
			}
			lines := l.Lines()
			got := make([]string, 0, len(lines))
			for _, line := range lines {
				got = append(got, line.Msg)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
			all := strings.Join(tt.writes, "")
			if l.String() != all || copied.String() != all {
				t.Errorf("output %q, copy %q, want both %q", l.String(), copied.String(), all)
			}
		})
	}
}

func TestLineFields(t *testing.T) {
	l := newLog(nil)
	l.write([]byte(`{"time":"2026-01-02T03:04:05.5Z","msg":"m","module":"alpha","failures":2}` + "\n"))
	line := l.Lines()[0]
	if want := time.Date(2026, 1, 2, 3, 4, 5, 5e8, time.UTC); !line.Time.Equal(want) {
		t.Errorf("Time = %s, want %s", line.Time, want)
	}
	for key, want := range map[string]string{"module": "alpha", "failures": "2", "missing": ""} {
		if got := line.Attr(key); got != want {
			t.Errorf("Attr(%q) = %q, want %q", key, got, want)
		}
	}
	if !line.matches("m", map[string]string{"module": "alph"}) || line.matches("m", map[string]string{"module": "beta"}) {
		t.Error("matches does not compare attribute substrings")
	}
}

func TestLogWait(t *testing.T) {
	isB := func(l Line) bool { return l.Msg == "b" }
	l := newLog(nil)
	l.write([]byte(`{"msg":"b"}` + "\n" + `{"msg":"a"}` + "\n"))

	done := make(chan int)
	go func() {
		i, err := l.Wait(t.Context(), 1, isB)
		if err != nil {
			t.Errorf("Wait: %v", err)
		}
		done <- i
	}()
	l.write([]byte(`{"msg":"b"}` + "\n"))
	if i := <-done; i != 2 {
		t.Errorf("Wait from 1 = line %d, want 2", i)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := l.Wait(ctx, 3, isB); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with an ended context: %v, want context.Canceled", err)
	}

	l.write([]byte(`{"msg":"b"}`))
	exit := errors.New("exit status 1")
	l.close(exit)
	if i, err := l.Wait(t.Context(), 3, isB); err != nil || i != 3 {
		t.Errorf("Wait for the unfinished last line: %d, %v; want 3", i, err)
	}
	if _, err := l.Wait(t.Context(), 4, isB); !errors.Is(err, ErrExited) || !errors.Is(err, exit) {
		t.Errorf("Wait after the exit: %v, want ErrExited with the exit error", err)
	}
}
