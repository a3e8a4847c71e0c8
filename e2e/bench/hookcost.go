package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// HookCost is the cost of one hook run through the operator's executor:
// temporary files, fork/exec, the hook's own work, reading the outputs.
type HookCost struct {
	Kind string
	Runs int
	// Median and P99 are wall times of one run.
	Median, P99 time.Duration
	// CPU is the CPU time (user and system) of the hook processes and
	// their children, per run.
	CPU time.Duration
	// Size is the hook executable's size in bytes.
	Size int64
}

// MeasureHookCost runs the bench's beforeHelm hook as bash+jq and compiled
// with pkg/sdk, runs times each, through hook.Executor, and returns both
// costs. dir receives the hooks and the runs' files.
func MeasureHookCost(ctx context.Context, dir string, runs int) ([]HookCost, error) {
	if runs < 1 {
		return nil, errors.New("hook cost: runs must be positive")
	}
	script := filepath.Join(dir, "before-helm.sh")
	if err := writeFile(script, strings.ReplaceAll(jqBeforeHelmHook, "MODKEY", "mod1"), 0o755); err != nil {
		return nil, err
	}
	bin, err := buildGoHook(ctx, dir)
	if err != nil {
		return nil, err
	}
	e := &hook.Executor{TempDir: dir, Env: []string{"BENCH_MODULE=mod1"}}
	var out []HookCost
	for _, h := range []struct{ kind, path string }{{"bash+jq", script}, {"Go (pkg/sdk)", bin}} {
		c, err := hookCost(ctx, e, h.path, runs)
		if err != nil {
			return out, fmt.Errorf("hook cost of %s: %w", h.kind, err)
		}
		c.Kind = h.kind
		out = append(out, c)
	}
	return out, nil
}

func hookCost(ctx context.Context, e *hook.Executor, path string, runs int) (HookCost, error) {
	info, err := os.Stat(path)
	if err != nil {
		return HookCost{}, fmt.Errorf("stat hook: %w", err)
	}
	run := hook.Run{
		Path: path, Kind: hook.RunHook, Contexts: []hook.BindingContext{{Binding: "beforeHelm"}},
		Values: values.Values{"global": map[string]any{}, "mod1": map[string]any{"config": "initial"}},
	}
	walls := make([]time.Duration, 0, runs)
	before := childrenCPU()
	for range runs {
		start := time.Now()
		res, err := e.Run(ctx, run)
		if err != nil {
			return HookCost{}, err
		}
		walls = append(walls, time.Since(start))
		if len(res.ValuesPatch) != 1 || res.ValuesPatch[0].Value != "hook-initial" {
			return HookCost{}, fmt.Errorf("unexpected values patch %+v", res.ValuesPatch)
		}
	}
	cpu := childrenCPU() - before
	slices.Sort(walls)
	return HookCost{
		Runs: runs, Median: walls[len(walls)/2], P99: walls[min(len(walls)-1, len(walls)*99/100)],
		CPU: cpu / time.Duration(runs), Size: info.Size(),
	}, nil
}

// childrenCPU is the CPU time of this process's waited-for children.
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// buildGoHook builds e2e/bench/gohook into dir.
func buildGoHook(ctx context.Context, dir string) (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("locate bench package source")
	}
	bin := filepath.Join(dir, "gohook")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./e2e/bench/gohook")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build the Go hook: %w", err)
	}
	return bin, nil
}

// HookCostMarkdown is the table of hook run costs, with the compiled
// hook's ratios to the first (bash+jq) row.
func HookCostMarkdown(costs []HookCost) string {
	var b strings.Builder
	b.WriteString("| hook | runs | median | p99 | CPU per run | executable |\n| --- | ---: | ---: | ---: | ---: | ---: |\n")
	for i, c := range costs {
		ratio := func(x, base time.Duration) string {
			if i == 0 || x <= 0 {
				return ""
			}
			return fmt.Sprintf(" (%.1fx less)", float64(base)/float64(x))
		}
		fmt.Fprintf(&b, "| %s | %d | %s%s | %s%s | %s%s | %s |\n", c.Kind, c.Runs,
			formatMillis(c.Median), ratio(c.Median, costs[0].Median),
			formatMillis(c.P99), ratio(c.P99, costs[0].P99),
			formatMillis(c.CPU), ratio(c.CPU, costs[0].CPU), formatSize(c.Size))
	}
	return b.String()
}

// formatMillis formats d in milliseconds with two decimals.
func formatMillis(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// formatSize formats a file size in kB or MB.
func formatSize(b int64) string {
	if b < 1e6 {
		return fmt.Sprintf("%.1f kB", float64(b)/1e3)
	}
	return formatMB(b)
}
