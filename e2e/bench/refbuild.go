package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// referenceBuild is the command that builds package pkg of the module in
// e2e/bench/reference (the reference v1.5.0 and the shell-operator v1.4.12
// it requires, from the Go module proxy only, through Go's build cache)
// into dir/name, and the binary's path. It needs cgo: one of the
// reference's packages imports github.com/goccy/go-graphviz.
func referenceBuild(ctx context.Context, dir, name, pkg string) (*exec.Cmd, string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return nil, "", errors.New("locate bench package source")
	}
	bin := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	cmd.Dir = filepath.Join(filepath.Dir(file), "reference")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "GOWORK=off")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd, bin, nil
}

// buildReferenceModule runs referenceBuild; what names the program in
// its error.
func buildReferenceModule(ctx context.Context, dir, name, pkg, what string) (string, error) {
	cmd, bin, err := referenceBuild(ctx, dir, name, pkg)
	if err != nil {
		return "", err
	}
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build %s: %w", what, err)
	}
	return bin, nil
}
