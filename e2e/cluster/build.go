// Package cluster builds, starts and stops a local Kubernetes control plane
// (etcd and kube-apiserver compiled from the Go module proxy) for end-to-end
// tests and for developers' shells.
package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
)

// Binaries are the paths of a built control plane.
type Binaries struct {
	Version       string
	Etcd          string
	KubeAPIServer string
}

// kubernetesRequire finds the k8s.io/kubernetes version in the tools go.mod,
// the single place that pins which control plane is built.
var kubernetesRequire = regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes (v\d+\.\d+\.\d+)\b`)

// ToolsDir returns the directory of the separate Go module that builds the
// control plane. It is found relative to this source file, so it works from
// any test package and from `go run`.
func ToolsDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("locate cluster package source")
	}
	return filepath.Join(filepath.Dir(file), "tools"), nil
}

// DefaultCacheDir is where built binaries are kept between runs:
// $ADDON_OPERATOR_CACHE_DIR, else the user cache dir.
func DefaultCacheDir() (string, error) {
	if dir := os.Getenv("ADDON_OPERATOR_CACHE_DIR"); dir != "" {
		return dir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find cache dir: %w", err)
	}
	return filepath.Join(base, "addon-operator"), nil
}

// Build makes sure etcd and kube-apiserver exist in cacheDir under a key made
// of the Kubernetes version and a hash of the tools module, building them when
// missing. Concurrent callers (parallel test binaries) serialise on a file
// lock, so the binaries are built once. Build output goes to log.
func Build(ctx context.Context, cacheDir string, log io.Writer) (Binaries, error) {
	tools, err := ToolsDir()
	if err != nil {
		return Binaries{}, err
	}
	version, key, err := cacheKey(tools)
	if err != nil {
		return Binaries{}, err
	}
	dir := filepath.Join(cacheDir, "control-plane", key)
	bins := Binaries{
		Version:       version,
		Etcd:          filepath.Join(dir, "etcd"),
		KubeAPIServer: filepath.Join(dir, "kube-apiserver"),
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return Binaries{}, fmt.Errorf("create cache dir: %w", err)
	}
	unlock, err := lockFile(filepath.Join(dir, ".lock"))
	if err != nil {
		return Binaries{}, err
	}
	defer unlock()

	ldflags := fmt.Sprintf("-s -w -X k8s.io/component-base/version.gitVersion=%s"+
		" -X k8s.io/component-base/version.gitMajor=%s -X k8s.io/component-base/version.gitMinor=%s",
		version, versionPart(version, 0), versionPart(version, 1))
	targets := []struct{ out, pkg, ldflags string }{
		{bins.Etcd, "./etcd", "-s -w"},
		{bins.KubeAPIServer, "k8s.io/kubernetes/cmd/kube-apiserver", ldflags},
	}
	for _, t := range targets {
		if _, err := os.Stat(t.out); err == nil {
			continue
		}
		fmt.Fprintf(log, "building %s (%s) into %s; this takes minutes the first time\n", filepath.Base(t.out), version, dir)
		tmp := t.out + ".tmp"
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", t.ldflags, "-o", tmp, t.pkg)
		cmd.Dir = tools
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=readonly")
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return Binaries{}, fmt.Errorf("build %s: %w", t.pkg, err)
		}
		if err := os.Rename(tmp, t.out); err != nil {
			return Binaries{}, fmt.Errorf("install %s: %w", t.out, err)
		}
	}
	return bins, nil
}

// cacheKey reads the pinned Kubernetes version and hashes everything that
// decides the binaries' content.
func cacheKey(tools string) (version, key string, err error) {
	h := sha256.New()
	var gomod []byte
	for _, name := range []string{"go.mod", "go.sum", "etcd/main.go"} {
		data, err := os.ReadFile(filepath.Join(tools, name))
		if err != nil {
			return "", "", fmt.Errorf("read control-plane tools: %w", err)
		}
		if name == "go.mod" {
			gomod = data
		}
		h.Write(data)
	}
	h.Write([]byte(runtime.Version()))
	m := kubernetesRequire.FindSubmatch(gomod)
	if m == nil {
		return "", "", errors.New("k8s.io/kubernetes is not required in the control-plane tools go.mod")
	}
	version = string(m[1])
	return version, version + "-" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// versionPart returns field i of a "vX.Y.Z" version (0: major, 1: minor).
func versionPart(v string, i int) string { return strings.Split(strings.TrimPrefix(v, "v"), ".")[i] }

// lockFile takes an exclusive flock on path; the returned func releases it.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open build lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("take build lock: %w", err)
	}
	return func() { _ = f.Close() }, nil
}
