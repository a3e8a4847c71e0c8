package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/addon-operator/addon-operator/pkg/server"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// debugOptions are the flags shared by the commands that ask a running
// operator.
type debugOptions struct {
	socket    string
	address   string
	tokenFile string
	output    string
}

// fetchFunc gets what a debug command shows, and how to print it as text;
// a nil text prints JSON.
type fetchFunc func(ctx context.Context, c *server.Client, args []string) (v any, text func(io.Writer) error, err error)

// newDebugCommands returns queue, module and global: commands that ask a
// running operator over its debug socket, or over HTTP with --address.
func newDebugCommands() []*cobra.Command {
	o := &debugOptions{socket: server.DefaultDebugSocket, output: "text"}
	queue := o.group("queue", "Show a running operator's queues")
	queue.AddCommand(o.command("list", "List every queue with its tasks, their failures and last errors", cobra.NoArgs,
		func(ctx context.Context, c *server.Client, _ []string) (any, func(io.Writer) error, error) {
			qs, err := c.Queues(ctx)
			return qs, func(w io.Writer) error { return printQueues(w, qs) }, err
		}))
	module := o.group("module", "Show a running operator's modules: state, values, config and rendered manifests")
	module.AddCommand(
		o.command("list", "List modules with their enabled state, phase, release revision and last error", cobra.NoArgs,
			func(ctx context.Context, c *server.Client, _ []string) (any, func(io.Writer) error, error) {
				ms, err := c.Modules(ctx)
				return ms, func(w io.Writer) error { return printModuleStatuses(w, ms) }, err
			}),
		o.command("values NAME", "Print a module's effective values, hook patches included, as its chart gets them", cobra.ExactArgs(1),
			func(ctx context.Context, c *server.Client, args []string) (any, func(io.Writer) error, error) {
				v, err := c.ModuleValues(ctx, args[0])
				return v, nil, err
			}),
		o.command("config NAME", "Print a module's section of the ConfigMap in force", cobra.ExactArgs(1),
			func(ctx context.Context, c *server.Client, args []string) (any, func(io.Writer) error, error) {
				v, err := c.ModuleConfig(ctx, args[0])
				return v, nil, err
			}),
		o.renderCommand(),
	)
	global := o.group("global", "Show a running operator's global values and config")
	global.AddCommand(
		o.command("values", "Print the effective global values, hook patches included", cobra.NoArgs,
			func(ctx context.Context, c *server.Client, _ []string) (any, func(io.Writer) error, error) {
				v, err := c.GlobalValues(ctx)
				return v, nil, err
			}),
		o.command("config", "Print the global section of the ConfigMap in force", cobra.NoArgs,
			func(ctx context.Context, c *server.Client, _ []string) (any, func(io.Writer) error, error) {
				v, err := c.GlobalConfig(ctx)
				return v, nil, err
			}),
	)
	return []*cobra.Command{queue, module, global}
}

// group returns a parent command holding the shared flags.
func (o *debugOptions) group(use, short string) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short, Long: short + `.

The operator is asked over its debug socket (--debug-socket), or over its
HTTP listener when --address is given; run it where the operator runs, e.g.
kubectl exec deploy/addon-operator -- addon-operator ` + use + ` ...`}
	fs := cmd.PersistentFlags()
	fs.StringVar(&o.socket, "debug-socket", o.socket, "the operator's debug socket (env ADDON_OPERATOR_DEBUG_SOCKET, DEBUG_UNIX_SOCKET)")
	fs.StringVar(&o.address, "address", o.address, "the operator's HTTP listener, e.g. http://10.0.0.5:9650; used instead of --debug-socket")
	fs.StringVar(&o.tokenFile, "token-file", o.tokenFile, "file holding a bearer token sent to --address, which serves the debug API only with --debug-http "+
		"and to authorized tokens, e.g. /var/run/secrets/kubernetes.io/serviceaccount/token")
	fs.StringVarP(&o.output, "output", "o", o.output, outputUsage())
	return cmd
}

// command returns a debug command printing what fetch gets.
func (o *debugOptions) command(use, short string, args cobra.PositionalArgs, fetch fetchFunc) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client(cmd.Flags())
			if err != nil {
				return err
			}
			v, text, err := fetch(cmd.Context(), c, args)
			if errors.Is(err, server.ErrUnreachable) {
				return fmt.Errorf("%w; the operator may not be running there: point --debug-socket "+
					"(env ADDON_OPERATOR_DEBUG_SOCKET) at its socket or --address at its HTTP listener", err)
			}
			if err != nil {
				return err
			}
			if cmd.Name() == "list" {
				// An unreachable API server or a rejected ConfigMap must
				// not read as "everything disabled, queues idle". An
				// operator too old to say is not asked again.
				if ws, err := c.Warnings(cmd.Context()); err == nil {
					for _, w := range ws {
						warnf(cmd.ErrOrStderr(), "%s", w)
					}
				}
			}
			return writeOutput(cmd.OutOrStdout(), o.output, v, text)
		},
	}
}

// client applies the environment to fs and returns a client for the
// operator the flags name.
func (o *debugOptions) client(fs *pflag.FlagSet) (*server.Client, error) {
	if err := applyEnv(fs, os.LookupEnv); err != nil {
		return nil, err
	}
	if err := checkOutput(o.output); err != nil {
		return nil, err
	}
	if o.address != "" {
		c, err := server.NewHTTPClient(o.address)
		if err != nil || o.tokenFile == "" {
			return c, err
		}
		token, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		return c.WithToken(strings.TrimSpace(string(token))), nil
	}
	return server.NewSocketClient(o.socket), nil
}

// renderOptions are the flags of module render.
type renderOptions struct {
	diff bool
	kube kubeFlags
}

func (o *debugOptions) renderCommand() *cobra.Command {
	r := &renderOptions{}
	changed := false
	cmd := o.command("render NAME", "Print the manifests the operator would apply for a module; --diff compares them with the cluster",
		cobra.ExactArgs(1), func(ctx context.Context, c *server.Client, args []string) (any, func(io.Writer) error, error) {
			rendered, err := c.Render(ctx, args[0])
			if err != nil {
				return nil, nil, err
			}
			if r.diff {
				view, err := r.kube.view(newWarnLogger(io.Discard))
				if err != nil {
					return nil, nil, err
				}
				diffs, err := view.moduleDiff(ctx, args[0], rendered.Manifest)
				changed = slices.ContainsFunc(diffs, func(d server.ObjectDiff) bool { return d.Action != server.ActionNone })
				return diffs, func(w io.Writer) error { return printDiffs(w, diffs) }, err
			}
			return rendered, func(w io.Writer) error {
				_, err := io.WriteString(w, strings.Join(append([]string{rendered.Manifest}, rendered.Hooks...), "\n---\n"))
				return err
			}, nil
		})
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := run(cmd, args); err != nil {
			return err
		}
		if changed {
			// As kubectl diff: exit code 1 when applying would change something.
			cmd.SilenceErrors = true
			return &exitError{code: 1}
		}
		return nil
	}
	fs := cmd.Flags()
	fs.BoolVar(&r.diff, "diff", false, "show how each rendered object differs from the live one, and the release's objects it would delete "+
		"(chart hooks are not compared); exit code 1 when anything would change")
	r.kube.bind(fs)
	return cmd
}

func printQueues(w io.Writer, qs []status.QueueStatus) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tSTATUS\tTASK\tQUEUED\tFAILURES\tLAST ERROR")
	for _, q := range qs {
		if len(q.Tasks) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t-\t\t\t\n", q.Name, q.Status)
		}
		for _, t := range q.Tasks {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", q.Name, q.Status, t.Description,
				t.Queued.UTC().Format(time.DateTime+" UTC"), orEmpty(t.Failures), oneLine(t.LastError))
		}
	}
	return tw.Flush()
}

func printModuleStatuses(w io.Writer, ms []status.ModuleStatus) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tENABLED\tDECIDED BY\tPHASE\tNAMESPACE\tREVISION\tREASON\tMESSAGE\tLAST ERROR")
	for i := range ms {
		m := &ms[i]
		fmt.Fprintf(tw, "%s\t%t\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, m.Enabled, m.By, m.Phase, m.Namespace, orEmpty(m.Revision),
			m.Reason, oneLine(m.Message), oneLine(m.LastError))
	}
	return tw.Flush()
}

// printDiffs prints each object's verdict and diff, then a summary.
func printDiffs(w io.Writer, diffs []server.ObjectDiff) error {
	for _, d := range diffs {
		if err := printDiff(w, d); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintln(w, diffSummary(diffs))
	return err
}

// printDiff prints one object's verdict and diff.
func printDiff(w io.Writer, d server.ObjectDiff) error {
	verdicts := map[server.Action]string{server.ActionCreate: "to be created", server.ActionUpdate: "to be updated",
		server.ActionDelete: "to be deleted", server.ActionNone: "unchanged"}
	_, err := fmt.Fprintf(w, "%s: %s\n%s", d.Object, verdicts[d.Action], d.Diff)
	return err
}

// diffSummary counts objects by action: "1 to create, 1 to update, 0 to
// delete, 2 unchanged".
func diffSummary(diffs []server.ObjectDiff) string {
	counts := map[server.Action]int{}
	for _, d := range diffs {
		counts[d.Action]++
	}
	return fmt.Sprintf("%d to create, %d to update, %d to delete, %d unchanged",
		counts[server.ActionCreate], counts[server.ActionUpdate], counts[server.ActionDelete], counts[server.ActionNone])
}

// orEmpty formats n, or "" for zero: a table cell with nothing to say.
func orEmpty(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// oneLine keeps a multi-line error on its table row.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// newLiveCommand groups the commands that ask a running operator.
func newLiveCommand() *cobra.Command {
	live := &cobra.Command{
		Use:   "live",
		Short: "Ask a running operator: queues, modules, values, renders, profiles",
		Long: `Ask a running operator over its debug socket (--debug-socket) or its HTTP
listener (--address). Run where the operator runs, e.g.
kubectl exec deploy/addon-operator -- addon-operator live module list`,
	}
	live.AddCommand(newDebugCommands()...)
	live.AddCommand(newProfileCommand())
	return live
}
