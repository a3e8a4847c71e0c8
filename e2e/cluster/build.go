// Package cluster builds, starts and stops a local Kubernetes control plane
// (etcd and kube-apiserver compiled from the Go module proxy) for end-to-end
// tests and for developers' shells; on request also the controllers, the
// scheduler and kwok's simulated nodes, so that workloads become ready.
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
	// Workloads are set by BuildWorkloads and needed by Options.Workloads.
	Workloads WorkloadBinaries
}

// WorkloadBinaries are what makes workloads run on the control plane: the
// controllers, the scheduler and kwok's simulated nodes.
type WorkloadBinaries struct {
	KubeControllerManager string
	KubeScheduler         string
	Kwok                  string
}

// A binarySet is built from one tools module and cached under one key, made
// of a version pinned in that module's go.mod and a hash of the files that
// decide the binaries. Sets are keyed apart, so changing one never rebuilds
// another: the API server's minutes-long build is only redone when its own
// module changes.
type binarySet struct {
	module   string         // directory of the tools module, relative to ToolsDir
	cacheDir string         // subdirectory of the cache dir
	keyFiles []string       // files of the module hashed into the key
	version  *regexp.Regexp // finds the pinned version in go.mod
	targets  []target
}

// A target is one binary of a set.
type target struct {
	name, pkg string
	// kubeVersion stamps the Kubernetes version into the binary, which
	// clients such as Helm and kubectl parse.
	kubeVersion bool
}

var (
	// kubernetesRequire finds the k8s.io/kubernetes version in a tools go.mod.
	kubernetesRequire = regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes (v\d+\.\d+\.\d+)\b`)
	// kwokRequire finds the kwok version in the kwok tools go.mod.
	kwokRequire = regexp.MustCompile(`(?m)^\s*sigs\.k8s\.io/kwok (v\d+\.\d+\.\d+)\b`)
)

// The sets. controlPlaneSet's key must stay what it was before the other
// sets existed (the same directory, files and hash), so that caches already
// built stay valid.
func controlPlaneSet() binarySet {
	return binarySet{
		module: ".", cacheDir: "control-plane",
		keyFiles: []string{"go.mod", "go.sum", "etcd/main.go"},
		version:  kubernetesRequire,
		targets: []target{
			{name: "etcd", pkg: "./etcd"},
			{name: "kube-apiserver", pkg: "k8s.io/kubernetes/cmd/kube-apiserver", kubeVersion: true},
		},
	}
}

func controllersSet() binarySet {
	return binarySet{
		module: "controllers", cacheDir: "controllers",
		keyFiles: []string{"go.mod", "go.sum"},
		version:  kubernetesRequire,
		targets: []target{
			{name: "kube-controller-manager", pkg: "k8s.io/kubernetes/cmd/kube-controller-manager", kubeVersion: true},
			{name: "kube-scheduler", pkg: "k8s.io/kubernetes/cmd/kube-scheduler", kubeVersion: true},
		},
	}
}

func kubectlSet() binarySet {
	return binarySet{
		module: "kubectl", cacheDir: "kubectl",
		keyFiles: []string{"go.mod", "go.sum"},
		version:  kubernetesRequire,
		targets:  []target{{name: "kubectl", pkg: "k8s.io/kubernetes/cmd/kubectl", kubeVersion: true}},
	}
}

func kwokSet() binarySet {
	return binarySet{
		module: "kwok", cacheDir: "kwok",
		keyFiles: []string{"go.mod", "go.sum"},
		version:  kwokRequire,
		targets:  []target{{name: "kwok", pkg: "sigs.k8s.io/kwok/cmd/kwok"}},
	}
}

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
	version, paths, err := controlPlaneSet().build(ctx, cacheDir, log)
	if err != nil {
		return Binaries{}, err
	}
	return Binaries{Version: version, Etcd: paths["etcd"], KubeAPIServer: paths["kube-apiserver"]}, nil
}

// BuildWorkloads makes sure kube-controller-manager, kube-scheduler and kwok
// exist in cacheDir, as Build does for the API server. The controllers are
// cached under a key of their own tools module (tools/controllers), kwok
// under its module's (tools/kwok): neither changes the API server's key.
func BuildWorkloads(ctx context.Context, cacheDir string, log io.Writer) (WorkloadBinaries, error) {
	_, controllers, err := controllersSet().build(ctx, cacheDir, log)
	if err != nil {
		return WorkloadBinaries{}, err
	}
	_, kwok, err := kwokSet().build(ctx, cacheDir, log)
	if err != nil {
		return WorkloadBinaries{}, err
	}
	return WorkloadBinaries{
		KubeControllerManager: controllers["kube-controller-manager"],
		KubeScheduler:         controllers["kube-scheduler"],
		Kwok:                  kwok["kwok"],
	}, nil
}

// BuildKubectl makes sure kubectl, of the API server's Kubernetes version,
// exists in cacheDir, as Build does for the API server, and returns its
// path. It is cached under a key of its own tools module (tools/kubectl).
func BuildKubectl(ctx context.Context, cacheDir string, log io.Writer) (string, error) {
	_, paths, err := kubectlSet().build(ctx, cacheDir, log)
	if err != nil {
		return "", err
	}
	return paths["kubectl"], nil
}

// build makes sure every target of s exists in its cache directory and
// returns the set's version and each target's path by name.
func (s binarySet) build(ctx context.Context, cacheDir string, log io.Writer) (string, map[string]string, error) {
	tools, err := ToolsDir()
	if err != nil {
		return "", nil, err
	}
	module := filepath.Join(tools, s.module)
	version, key, err := s.cacheKey(module)
	if err != nil {
		return "", nil, err
	}
	dir := filepath.Join(cacheDir, s.cacheDir, key)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", nil, fmt.Errorf("create cache dir: %w", err)
	}
	unlock, err := lockFile(filepath.Join(dir, ".lock"))
	if err != nil {
		return "", nil, err
	}
	defer unlock()

	paths := make(map[string]string, len(s.targets))
	for _, t := range s.targets {
		out := filepath.Join(dir, t.name)
		paths[t.name] = out
		if _, err := os.Stat(out); err == nil {
			continue
		}
		ldflags := "-s -w"
		if t.kubeVersion {
			ldflags += fmt.Sprintf(" -X k8s.io/component-base/version.gitVersion=%s"+
				" -X k8s.io/component-base/version.gitMajor=%s -X k8s.io/component-base/version.gitMinor=%s",
				version, versionPart(version, 0), versionPart(version, 1))
		}
		fmt.Fprintf(log, "building %s (%s) into %s; this takes minutes the first time\n", t.name, version, dir)
		tmp := out + ".tmp"
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", tmp, t.pkg)
		cmd.Dir = module
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-mod=readonly")
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return "", nil, fmt.Errorf("build %s: %w", t.pkg, err)
		}
		if err := os.Rename(tmp, out); err != nil {
			return "", nil, fmt.Errorf("install %s: %w", out, err)
		}
	}
	return version, paths, nil
}

// cacheKey reads the pinned version and hashes everything that decides the
// binaries' content: the key files and the Go toolchain.
func (s binarySet) cacheKey(module string) (version, key string, err error) {
	h := sha256.New()
	var gomod []byte
	for _, name := range s.keyFiles {
		data, err := os.ReadFile(filepath.Join(module, name))
		if err != nil {
			return "", "", fmt.Errorf("read tools module %s: %w", s.module, err)
		}
		if name == "go.mod" {
			gomod = data
		}
		h.Write(data)
	}
	h.Write([]byte(runtime.Version()))
	m := s.version.FindSubmatch(gomod)
	if m == nil {
		return "", "", fmt.Errorf("no pinned version in %s: want a match of %s", filepath.Join(module, "go.mod"), s.version)
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
