package hook

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"time"

	"github.com/addon-operator/addon-operator/pkg/hook/batch"
	"github.com/addon-operator/addon-operator/pkg/hook/configcache"
	"github.com/addon-operator/addon-operator/pkg/hook/process"
	"github.com/addon-operator/addon-operator/pkg/hook/runfiles"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// Executor defaults, used for zero fields.
const (
	DefaultTimeout       = 10 * time.Minute
	DefaultWaitDelay     = 5 * time.Second
	DefaultMaxOutputSize = 32 << 20
)

// Executor runs hooks and enabled scripts as child processes speaking the
// file protocol. The zero value is ready to use. It holds configuration and
// a pool of buffers, is safe for concurrent use and must not be copied
// after first use.
type Executor struct {
	// Logger receives the processes' output lines; nil discards them.
	Logger *slog.Logger
	// Timeout bounds a run that sets none; zero means DefaultTimeout.
	Timeout time.Duration
	// WaitDelay is the grace between SIGTERM and SIGKILL to the process
	// group of a run that timed out or was cancelled; zero means
	// DefaultWaitDelay.
	WaitDelay time.Duration
	// TempDir is where per-run directories are created; empty means
	// os.TempDir().
	TempDir string
	// Env is added to the operator's environment for every process, in
	// "KEY=value" form; the protocol variables override it.
	Env []string
	// MaxOutputSize limits each output file and --config output, in bytes;
	// zero means DefaultMaxOutputSize.
	MaxOutputSize int64
	// MaxLogBytes bounds the output lines logged for one run (stdout and
	// stderr together), so a chatty hook cannot flood the operator's log;
	// the rest is counted and reported in one warning. Zero means no
	// bound. The stderr tail of a failed run is kept regardless.
	MaxLogBytes int64

	// procs starts the processes.
	procs process.Runner
	// checks remembers batch binaries' settings checks and their last
	// answers (see CheckSettings).
	checks batch.Checks
	// configs remembers what unchanged hook files printed for --config.
	configs configcache.Cache
}

// RunKind selects the protocol of a Run (see runfiles.Kind).
type RunKind = runfiles.Kind

// Run kinds: RunHook runs a hook, RunEnabledScript a module's enabled
// script, RunWebhook a hook for one admission or conversion request; see
// runfiles for the files each gets.
const (
	RunHook          = runfiles.Hook
	RunEnabledScript = runfiles.EnabledScript
	RunWebhook       = runfiles.Webhook
)

// Run describes one execution.
type Run struct {
	// Path is the executable; it runs in the operator's working
	// directory, as the protocol's hooks expect.
	Path string
	// Args are passed to the executable: a batch binary's "hook run <id>"
	// (BatchHook.Args); plain hooks get none.
	Args []string
	Kind RunKind
	// Contexts are written as a JSON array to BINDING_CONTEXT_PATH.
	Contexts []BindingContext
	// Values and ConfigValues are written to VALUES_PATH and
	// CONFIG_VALUES_PATH; nil is written as {}.
	Values       values.Values
	ConfigValues values.Values
	// Module, Hook and Binding label the output lines logged during the
	// run; empty ones are left out.
	Module  string
	Hook    string
	Binding string
	// Timeout overrides the Executor's timeout when non-zero.
	Timeout time.Duration
}

// Config runs "path --config" and returns what it printed to stdout, for
// ParseConfig. Stderr is logged. Errors do not repeat the path. A file
// whose content has not changed since it last printed its configuration
// is not run again (see configcache.Cache).
func (e *Executor) Config(ctx context.Context, path string) ([]byte, error) {
	env := slices.Concat(os.Environ(), e.Env)
	out, err := e.configs.Get(path, env, func() ([]byte, error) { return e.runConfig(ctx, path, env) })
	if err != nil {
		return nil, err
	}
	if limit := e.maxOutput(); int64(len(out)) > limit {
		return nil, fmt.Errorf("config output larger than %d bytes", limit)
	}
	return out, nil
}

// runConfig runs "path --config".
func (e *Executor) runConfig(ctx context.Context, path string, env []string) ([]byte, error) {
	out := &process.LimitedBuffer{Limit: e.maxOutput()}
	err := e.execute(ctx, process.Process{
		Path:     path,
		Args:     []string{"--config"},
		Env:      env,
		Logger:   e.logger().With(slog.String(logkey.Hook, path)),
		Stdout:   out,
		LogLimit: e.MaxLogBytes,
	})
	if err != nil {
		return nil, err
	}
	if out.Overflow {
		return nil, fmt.Errorf("config output larger than %d bytes", out.Limit)
	}
	return out.Buf, nil
}

// Run executes r and returns its parsed outputs. A failed process yields an
// *ExitError, with a Result holding only the object operations it wrote
// (see failedOutputs); exceeding the timeout an error matching ErrTimeout.
// Errors do not repeat the path; an output error names the file's variable.
func (e *Executor) Run(ctx context.Context, r Run) (*Result, error) {
	dir, err := os.MkdirTemp(e.TempDir, "hook-run-")
	if err != nil {
		return nil, fmt.Errorf("create run dir: %w", err)
	}
	logger := e.logger().With(r.attrs()...)
	defer func() {
		if err := os.RemoveAll(dir); err != nil {
			logger.Warn("remove hook run dir", logkey.Err(err))
		}
	}()
	files := runfiles.List(dir, r.Kind)
	if err := writeInputs(files, r); err != nil {
		return nil, err
	}
	env := slices.Concat(os.Environ(), e.Env)
	for _, f := range files {
		env = append(env, f.Env+"="+f.Path)
	}
	err = e.execute(ctx, process.Process{Path: r.Path, Args: r.Args, Env: env, Timeout: r.Timeout, Logger: logger, LogLimit: e.MaxLogBytes})
	if err != nil {
		return runfiles.Failed(files, e.maxOutput(), err), err
	}
	return runfiles.Collect(files, e.maxOutput())
}

// execute runs pr with the Executor's timeout, grace period and logger.
func (e *Executor) execute(ctx context.Context, pr process.Process) error {
	pr.Timeout = cmp.Or(pr.Timeout, e.Timeout, DefaultTimeout)
	pr.WaitDelay = cmp.Or(e.WaitDelay, DefaultWaitDelay)
	pr.Warnings = e.logger()
	return e.procs.Run(ctx, pr)
}

func (r *Run) attrs() []any {
	var attrs []any
	for _, a := range []slog.Attr{
		slog.String(logkey.Module, r.Module), slog.String(logkey.Hook, r.Hook), slog.String(logkey.Binding, r.Binding),
	} {
		if a.Value.String() != "" {
			attrs = append(attrs, a)
		}
	}
	return attrs
}

func (e *Executor) logger() *slog.Logger {
	if e.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Logger
}

func (e *Executor) maxOutput() int64 {
	return cmp.Or(e.MaxOutputSize, DefaultMaxOutputSize)
}

// writeInputs writes the input files and creates the output files empty, so
// that every file exists with mode 0600 and hooks may append to outputs.
func writeInputs(files []runfiles.File, r Run) error {
	for _, f := range files {
		var data []byte
		var err error
		switch f.Env {
		case runfiles.BindingContext:
			data, err = MarshalContexts(r.Contexts)
		case runfiles.Values:
			data, err = marshalValues(r.Values)
		case runfiles.ConfigValues:
			data, err = marshalValues(r.ConfigValues)
		}
		if err != nil {
			return fmt.Errorf("encode %s: %w", f.Env, err)
		}
		if err := process.WriteFile(f.Path, data); err != nil {
			return fmt.Errorf("write %s: %w", f.Env, err)
		}
	}
	return nil
}

func marshalValues(v values.Values) ([]byte, error) {
	if v == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(v)
}
