package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

// Exit codes of Serve.
const (
	exitOK    = 0
	exitFail  = 1
	exitUsage = 2
)

// Main serves the hook protocols for hooks with the process's arguments,
// environment and standard streams, and exits. SIGTERM and SIGINT cancel
// the running hook's context.
func Main(hooks ...Hook) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := Serve(ctx, Env{Args: os.Args[1:], Getenv: os.Getenv, Stdout: os.Stdout, Stderr: os.Stderr}, hooks...)
	stop()
	os.Exit(code)
}

// Env is the process environment Serve works in.
type Env struct {
	Args   []string
	Getenv func(string) string
	Stdout io.Writer
	Stderr io.Writer
}

// Serve answers one invocation and returns the exit code:
//
//	--config        the configuration of the only hook (plain protocol)
//	(no arguments)  runs the only hook (plain protocol)
//	hook list       "Found N items:" and "<id> - <name>" lines
//	hook config     {"version":"v1","hooks":[...],"readiness":{...}}
//	hook run <id>   runs hook <id>
//	hook ready      runs the readiness hook
func Serve(ctx context.Context, env Env, hooks ...Hook) int {
	b, err := newBinary(hooks)
	if err == nil {
		err = b.serve(ctx, env)
	}
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(env.Stderr, "%v\n", err)
	if errors.Is(err, errUsage) {
		return exitUsage
	}
	return exitFail
}

var errUsage = errors.New("usage")

// binary is the hooks of one executable, readiness apart.
type binary struct {
	hooks     []Hook
	readiness *Hook
}

func newBinary(hooks []Hook) (*binary, error) {
	b := &binary{}
	for i := range hooks {
		h := hooks[i]
		if h.Run == nil {
			return nil, fmt.Errorf("hook %q has no Run function", h.Name)
		}
		if !h.Readiness {
			b.hooks = append(b.hooks, h)
			continue
		}
		if b.readiness != nil {
			return nil, fmt.Errorf("hooks %q and %q are both readiness hooks", b.readiness.Name, h.Name)
		}
		b.readiness = &h
	}
	return b, nil
}

func (b *binary) serve(ctx context.Context, env Env) error {
	args := env.Args
	switch {
	case len(args) == 1 && args[0] == "--config":
		h, err := b.only()
		if err != nil {
			return err
		}
		return writeJSON(env.Stdout, struct {
			ConfigVersion string `json:"configVersion"`
			Config
		}{"v1", h.Config})
	case len(args) == 0:
		h, err := b.only()
		if err != nil {
			return err
		}
		return run(ctx, env, h)
	case len(args) == 2 && isHookCmd(args[0]) && args[1] == "list":
		fmt.Fprintf(env.Stdout, "Found %d items:\n", len(b.hooks))
		for i := range b.hooks {
			fmt.Fprintf(env.Stdout, "%d - %s\n", i, b.hooks[i].Name)
		}
		return nil
	case len(args) == 2 && isHookCmd(args[0]) && args[1] == "config":
		return b.printConfig(env.Stdout)
	case len(args) == 3 && isHookCmd(args[0]) && args[1] == "run":
		id, err := strconv.Atoi(args[2])
		if err != nil || id < 0 || id >= len(b.hooks) {
			return fmt.Errorf("%w: no hook %q, want 0..%d", errUsage, args[2], len(b.hooks)-1)
		}
		return run(ctx, env, &b.hooks[id])
	case len(args) == 2 && isHookCmd(args[0]) && args[1] == "ready":
		if b.readiness == nil {
			return fmt.Errorf("%w: no readiness hook", errUsage)
		}
		return run(ctx, env, b.readiness)
	}
	return fmt.Errorf("%w: unknown arguments %q: want --config, or hook list|config|run <id>|ready", errUsage, args)
}

func isHookCmd(s string) bool { return s == "hook" || s == "hooks" }

// only returns the binary's single hook, for the plain protocol.
func (b *binary) only() (*Hook, error) {
	if len(b.hooks) != 1 || b.readiness != nil {
		return nil, fmt.Errorf("%w: this binary carries several hooks: use hook list|config|run", errUsage)
	}
	return &b.hooks[0], nil
}

func (b *binary) printConfig(w io.Writer) error {
	doc := struct {
		Version   string      `json:"version"`
		Hooks     []versioned `json:"hooks"`
		Readiness *versioned  `json:"readiness,omitempty"`
	}{Version: "v1", Hooks: make([]versioned, 0, len(b.hooks))}
	for i := range b.hooks {
		doc.Hooks = append(doc.Hooks, b.hooks[i].versioned())
	}
	if b.readiness != nil {
		v := b.readiness.versioned()
		doc.Readiness = &v
	}
	return writeJSON(w, doc)
}

func writeJSON(w io.Writer, v any) error {
	if err := json.NewEncoder(w).Encode(v); err != nil {
		return fmt.Errorf("write config: %w", err)
	}
	return nil
}

// run reads the input files, runs h and writes its outputs.
func run(ctx context.Context, env Env, h *Hook) error {
	in := &Input{
		ValuesPatch: &Patch{}, ConfigValuesPatch: &Patch{}, Objects: &Objects{}, Metrics: &Metrics{},
		Logger: slog.New(slog.NewTextHandler(env.Stderr, nil)),
	}
	if err := readInputs(env.Getenv, in); err != nil {
		return fmt.Errorf("hook %s: %w", h.Name, err)
	}
	if err := h.Run(ctx, in); err != nil {
		return fmt.Errorf("hook %s: %w", h.Name, err)
	}
	if err := writeOutputs(env.Getenv, in); err != nil {
		return fmt.Errorf("hook %s: %w", h.Name, err)
	}
	return nil
}
