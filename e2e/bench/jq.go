package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// UseJQ makes the jq binary at path the one every process the bench starts
// finds first on its PATH (the operators and their hooks), and returns its
// version. An empty path keeps the PATH's jq and reports its version. The
// link it makes lives in dir.
//
// Hooks' figures depend on jq as much as on the operator: jq 1.6, the jq
// of Debian 12, spends about 15 ms of CPU on each start, jq 1.7.1, that of
// the operator's image (Debian 13), about 2 ms. `make bench` passes the
// jq that hack/jq/build.sh builds from Debian 13's source.
func UseJQ(ctx context.Context, path, dir string) (string, error) {
	if path != "" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", fmt.Errorf("jq %s: %w", path, err)
		}
		bin := filepath.Join(dir, "jq-bin")
		if err := os.MkdirAll(bin, 0o755); err != nil { //nolint:gosec // G301: a directory of executables
			return "", fmt.Errorf("jq %s: %w", path, err)
		}
		if err := os.Symlink(abs, filepath.Join(bin, "jq")); err != nil {
			return "", fmt.Errorf("jq %s: %w", path, err)
		}
		if err := os.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH")); err != nil {
			return "", fmt.Errorf("jq %s: %w", path, err)
		}
	}
	out, err := exec.CommandContext(ctx, "jq", "--version").Output()
	if err != nil {
		return "", fmt.Errorf("jq --version: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}
