package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// exitError makes the process exit with code; a nil err prints nothing
// (the command printed what there was to say), as diff's "changes found".
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit code %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// exitCode is the process's exit code for the error a command returned.
func exitCode(err error) int {
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return 1
}

// requireSubcommand makes every command group under cmd fail on an
// unknown subcommand, with a suggestion, instead of printing its help and
// exiting 0; a group given no arguments still prints its help.
func requireSubcommand(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		requireSubcommand(c)
	}
	if !cmd.HasSubCommands() || cmd.Runnable() || !cmd.HasParent() {
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.SuggestionsMinimumDistance = 2
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return cmd.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
		}
		return fmt.Errorf("%s\nRun '%s --help' for usage.", msg, cmd.CommandPath()) //nolint:revive,staticcheck // cobra's own wording, ending as a sentence
	}
}

// warnHandler prints log records at warning level and above as plain
// "warning: message (key=value ...)" lines: what a CLI user reads.
type warnHandler struct {
	w     io.Writer
	attrs []slog.Attr
}

func newWarnLogger(w io.Writer) *slog.Logger { return slog.New(&warnHandler{w: w}) }

func (h *warnHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }

func (h *warnHandler) Handle(_ context.Context, r slog.Record) error {
	var parts []string
	add := func(a slog.Attr) bool {
		parts = append(parts, a.Key+"="+a.Value.String())
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	line := "warning: " + r.Message
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, " ") + ")"
	}
	_, err := fmt.Fprintln(h.w, line)
	return err
}

func (h *warnHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &warnHandler{w: h.w, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

func (h *warnHandler) WithGroup(string) slog.Handler { return h }

// warnf prints one CLI warning line.
func warnf(w io.Writer, format string, args ...any) {
	fmt.Fprintf(w, "warning: "+format+"\n", args...)
}

// kubeFlags load a kubeconfig as kubectl does: --kubeconfig, else
// $KUBECONFIG (a ':' list), else ~/.kube/config, else in-cluster
// credentials; --context picks a context. The namespace is the
// operator's: -n, else ADDON_OPERATOR_NAMESPACE; it is never taken from
// the kubeconfig, whose namespace is the user's, not the operator's.
type kubeFlags struct {
	kubeconfig string
	context    string
	namespace  string
}

// bind adds --kubeconfig, --context and -n/--namespace, with the
// operator's former spellings --kube-config and --kube-context as hidden
// aliases.
func (k *kubeFlags) bind(fs *pflag.FlagSet) {
	k.bindCluster(fs)
	fs.StringVarP(&k.namespace, "namespace", "n", "", namespaceUsage("required"))
}

// bindCluster adds --kubeconfig and --context (and their aliases) alone,
// for a command that only asks the cluster's version.
func (k *kubeFlags) bindCluster(fs *pflag.FlagSet) {
	fs.StringVar(&k.kubeconfig, "kubeconfig", "", kubeconfigUsage+" (env KUBE_CONFIG, KUBECONFIG; default: ~/.kube/config, else in-cluster credentials)")
	fs.StringVar(&k.context, "context", "", contextUsage+" (env KUBE_CONTEXT)")
	aliasFlag(fs, "kube-config", "kubeconfig")
	aliasFlag(fs, "kube-context", "context")
}

// restConfig returns the cluster's client config.
func (k *kubeFlags) restConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if path := firstOf(k.kubeconfig, os.Getenv("KUBE_CONFIG")); strings.Contains(path, string(filepath.ListSeparator)) {
		rules.Precedence = filepath.SplitList(path) // $KUBECONFIG's list form
	} else {
		rules.ExplicitPath = path
	}
	overrides := &clientcmd.ConfigOverrides{CurrentContext: firstOf(k.context, os.Getenv("KUBE_CONTEXT"))}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig (--kubeconfig, $KUBECONFIG, ~/.kube/config or in-cluster): %w", err)
	}
	return cfg, nil
}

// operatorNamespace returns the operator's namespace: -n, else
// ADDON_OPERATOR_NAMESPACE.
func (k *kubeFlags) operatorNamespace() (string, error) {
	ns := firstOf(k.namespace, os.Getenv("ADDON_OPERATOR_NAMESPACE"))
	if ns == "" {
		return "", errors.New("the operator's namespace is unknown: give -n/--namespace or set ADDON_OPERATOR_NAMESPACE " +
			"(the kubeconfig's namespace is not taken: it is rarely the operator's)")
	}
	return ns, nil
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
