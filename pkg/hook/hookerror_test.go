package hook

import (
	"errors"
	"strings"
	"testing"
)

func TestRunFailedKeepsObjectOperations(t *testing.T) {
	const ops = `{"operation":"MergePatch","apiVersion":"v1","kind":"ConfigMap","name":"c","subresource":"/status","mergePatch":{"status":{"ready":false}},"ignoreHookError":true}`
	tests := []struct {
		name   string
		script string
		want   string // the KUBERNETES_PATCH_PATH the result holds; "" for no result
	}{
		{"exit 1 after writing operations", "echo '" + ops + "' > \"$KUBERNETES_PATCH_PATH\"\necho '[]' > \"$VALUES_JSON_PATCH_PATH\"\nexit 1\n", ops},
		{"exit 1 without operations", "exit 1\n", ""},
		{"killed by a signal", "echo '" + ops + "' > \"$KUBERNETES_PATCH_PATH\"\nkill -9 $$\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, _, _ := testExecutor(t)
			path := writeScript(t, t.TempDir(), "hook.sh", tt.script)
			res, err := e.Run(t.Context(), Run{Path: path})
			var exit *ExitError
			if !errors.As(err, &exit) {
				t.Fatalf("Run: %v, want an *ExitError", err)
			}
			assertNoRunDirs(t, e)
			switch {
			case tt.want == "" && res != nil:
				t.Fatalf("Result %+v, want none", res)
			case tt.want == "":
			case res == nil:
				t.Fatalf("no Result, want the operations")
			case strings.TrimSpace(string(res.KubernetesPatch)) != tt.want || res.ValuesPatch != nil || res.Metrics != nil:
				t.Fatalf("Result %+v, want only KubernetesPatch %q", res, tt.want)
			}
		})
	}
}
