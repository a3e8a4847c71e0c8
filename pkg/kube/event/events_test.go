package event

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestFailureNote(t *testing.T) {
	base := errors.New("upgrade release: timed out")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{name: "plain error", err: base, want: "module echo: upgrade release: timed out"},
		{name: "error naming the module", err: fmt.Errorf("module echo: %w", base), want: "module echo: upgrade release: timed out"},
		{name: "quoted name", err: fmt.Errorf("module %q: %w", "echo", base), want: `module "echo": upgrade release: timed out`},
		{name: "hook error", err: errors.New("module echo hook hooks/a (beforeHelm): exit code 3"), want: "module echo hook hooks/a (beforeHelm): exit code 3"},
		{name: "a longer name is another module", err: errors.New("module echo-server: x"), want: "module echo: module echo-server: x"},
		{name: "another module's name stays", err: fmt.Errorf("module other: %w", base), want: "module echo: module other: upgrade release: timed out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := failureNote("echo", tt.err); got != tt.want {
				t.Errorf("failureNote = %q, want %q", got, tt.want)
			}
		})
	}
	long := failureNote("echo", errors.New(strings.Repeat("x", 2000)))
	if !strings.HasSuffix(long, "...") || len(long) > 1000 {
		t.Errorf("a long note is %d bytes, want it cut within the API's limit", len(long))
	}
}
