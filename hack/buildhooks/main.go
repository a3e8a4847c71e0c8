// Command buildhooks builds the shipped modules' Go hooks: every
// modules/NNN-<name>/hooks-go/ (a main package, usually written with
// pkg/sdk) becomes the executable modules/NNN-<name>/hooks/<name>, where
// the operator finds it as a batch binary. The executables are build
// outputs and are not committed.
//
// Run it from the repository root (make hooks; the image build and the
// catalogue tests run it too):
//
//	go run ./hack/buildhooks [modules-dir]
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
)

// prefix is a module directory's order prefix.
var prefix = regexp.MustCompile(`^\d+-`)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "buildhooks: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	modules := "modules"
	if len(args) > 0 {
		modules = args[0]
	}
	srcs, err := filepath.Glob(filepath.Join(modules, "*", "hooks-go"))
	if err != nil {
		return fmt.Errorf("find hooks-go dirs: %w", err)
	}
	for _, src := range srcs {
		dir := filepath.Dir(src)
		out := filepath.Join(dir, "hooks", prefix.ReplaceAllString(filepath.Base(dir), ""))
		// The image runs the operator as another user than the one who
		// builds: hooks/ must be readable and searchable by all.
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil { //nolint:gosec // G301: see above
			return fmt.Errorf("create hooks dir: %w", err)
		}
		if err := os.Chmod(filepath.Dir(out), 0o755); err != nil { //nolint:gosec // G302: see above
			return fmt.Errorf("create hooks dir: %w", err)
		}
		//nolint:gosec // G702: builds the repository's own hooks-go packages, found by a fixed glob
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./"+filepath.ToSlash(src))
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("build %s: %w", src, err)
		}
	}
	return nil
}
