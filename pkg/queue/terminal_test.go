package queue

import (
	"errors"
	"fmt"
	"testing"
)

func TestTerminalErrorIsSeenThroughWrapping(t *testing.T) {
	cause := errors.New("configVersion v0 is not supported")
	marked := TerminalError(cause)
	wrapped := fmt.Errorf("module web: hook a: %w", marked)
	if !IsTerminal(wrapped) {
		t.Error("a wrapped terminal error is not terminal")
	}
	if !errors.Is(wrapped, cause) {
		t.Error("the cause is not seen through the mark")
	}
	if wrapped.Error() != "module web: hook a: configVersion v0 is not supported" {
		t.Errorf("message %q: the mark changed it", wrapped)
	}
	if IsTerminal(fmt.Errorf("module web: %w", cause)) {
		t.Error("an unmarked error is terminal")
	}
	if TerminalError(nil) != nil {
		t.Error("TerminalError(nil) is not nil")
	}
}
