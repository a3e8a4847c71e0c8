package bench

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestLogbookWait(t *testing.T) {
	var copied strings.Builder
	b := NewLogbook(&copied)
	write := func(s string) {
		t.Helper()
		if _, err := io.WriteString(b, s); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"msg":"modules discovered","modules":3}` + "\nnot json\n" + `{"msg":"module run done","mod`)
	mark := b.Mark()
	if mark != 1 {
		t.Fatalf("Mark = %d after one complete JSON line, want 1", mark)
	}
	got := make(chan Entry, 1)
	go func() {
		e, err := b.Wait(t.Context(), mark, Message("module run done", "module", "mod2"))
		if err != nil {
			t.Error(err)
		}
		got <- e
	}()
	write(`ule":"mod1","duration":5}` + "\n")
	write(`{"msg":"module run done","module":"mod2","duration":7}` + "\n")
	e := <-got
	if d, ok := e.Duration("duration"); !ok || d != 7 {
		t.Errorf("waited-for line has duration %v, %v; want 7ns", d, ok)
	}
	if n := len(b.Since(mark)); n != 2 {
		t.Errorf("Since(mark) has %d lines, want 2", n)
	}
	if !strings.Contains(copied.String(), "not json") {
		t.Error("lines are not copied")
	}
}

func TestLogbookClose(t *testing.T) {
	b := NewLogbook(io.Discard)
	exit := errors.New("exit status 1")
	b.Close(exit)
	_, err := b.Wait(t.Context(), 0, Message("first converge done"))
	if !errors.Is(err, ErrExited) || !errors.Is(err, exit) {
		t.Errorf("Wait after Close = %v, want ErrExited wrapping %v", err, exit)
	}
}

func TestLogbookWaitCancelled(t *testing.T) {
	b := NewLogbook(io.Discard)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if _, err := b.Wait(ctx, 0, Message("never")); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait = %v, want DeadlineExceeded", err)
	}
}
