package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/lint"
	"github.com/addon-operator/addon-operator/pkg/values"
)

func newLintCommand() *cobra.Command {
	tree := newTreeOptions()
	strict, output := false, "text"
	cmd := &cobra.Command{
		Use:   "lint",
		Short: "Check modules, global hooks and a ConfigMap as the operator would, reporting every problem",
		Long: `Check the modules and global hooks on disk, the ConfigMap of --config and the
overrides of --values and --set, with the operator's own validation: module
names, module.yaml and duplicates, values files and their keys, ConfigMap
keys and sections against the config-values schemas, schema files, every
hook's --config, enabled scripts; then every module, enabled or not: its
values.yaml defaults against its values schema (whatever the ConfigMap sets
over them), its effective values (with x-required-for-helm for charts) and
its chart's render. One broken file hides no problem of another. Every
problem is printed with the file holding the bad key, the key and the rule.

Exit code: 0 when there are no errors (warnings allowed, unless --strict),
1 otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			if err := applyEnv(cmd.Flags(), os.LookupEnv); err != nil {
				return err
			}
			data, err := readConfigData(tree.configFile, cmd.InOrStdin())
			if err != nil {
				return err
			}
			overrides, err := lintOverrides(tree, cmd.InOrStdin())
			if err != nil {
				return err
			}
			base, _ := os.Getwd()
			problems := lint.Run(cmd.Context(), lint.Input{
				Discover:   tree.operator.Discovery.Options(nil),
				Namespace:  firstOf(tree.operator.Namespace, "default"),
				ConfigFile: tree.configFile,
				ConfigData: data,
				Runner:     &hook.Executor{Logger: newWarnLogger(io.Discard)},
				Overrides:  overrides,
				Base:       base,
			})
			if problems == nil {
				problems = []lint.Problem{}
			}
			if err := writeOutput(cmd.OutOrStdout(), output, problems, func(w io.Writer) error { return printProblems(w, problems) }); err != nil {
				return err
			}
			if lint.HasErrors(problems, strict) {
				cmd.SilenceErrors = true
				return &exitError{code: 1}
			}
			return nil
		},
	}
	fs := cmd.Flags()
	tree.bind(fs)
	tree.bindOverrides(fs)
	fs.StringVarP(&tree.operator.Namespace, "namespace", "n", "", namespaceUsage(`charts render into it; default "default"`))
	fs.BoolVar(&strict, "strict", false, "fail on warnings too")
	fs.StringVarP(&output, "output", "o", output, outputUsage())
	return cmd
}

// lintOverrides reads --values files and --set arguments as lint's
// overrides, each named by where it comes from.
func lintOverrides(tree *treeOptions, stdin io.Reader) ([]lint.Override, error) {
	var out []lint.Override
	for _, f := range tree.valueFiles {
		raw, err := readInput(f, stdin)
		if err != nil {
			return nil, fmt.Errorf("--values %s: %w", f, err)
		}
		v, err := values.FromYAML(raw)
		if err != nil {
			return nil, fmt.Errorf("--values %s: %w", f, err)
		}
		out = append(out, lint.Override{File: f, Values: v})
	}
	if len(tree.sets) > 0 {
		set := map[string]any{}
		for _, s := range tree.sets {
			if err := helm.ParseSet(s, set); err != nil {
				return nil, err
			}
		}
		out = append(out, lint.Override{File: "--set", Values: set})
	}
	return out, nil
}

func printProblems(w io.Writer, problems []lint.Problem) error {
	errs, warns := 0, 0
	for _, p := range problems {
		if p.Severity == lint.Error {
			errs++
		} else {
			warns++
		}
		if _, err := fmt.Fprintln(w, p); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%d %s, %d %s\n", errs, plural(errs, "error"), warns, plural(warns, "warning"))
	return err
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
