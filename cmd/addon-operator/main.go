// Command addon-operator runs platform addons, packaged as modules of Helm
// charts and hooks, in a Kubernetes cluster.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if err := newRootCommand().Execute(); err != nil {
		os.Exit(exitCode(err))
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "addon-operator",
		Short:         "Run platform addons (Helm charts with hooks) as modules in a Kubernetes cluster",
		SilenceUsage:  true,
		SilenceErrors: false,
		Version:       readVersion().String(),
	}
	root.SetVersionTemplate("{{.Version}}")
	root.AddCommand(newStartCommand(), newModulesCommand(), newLintCommand(), newDiffCommand(), newLiveCommand(), newExecutionHookCommand(), newVersionCommand())
	// The live commands' former top-level spellings keep working, unlisted.
	for _, c := range append(newDebugCommands(), newProfileCommand()) {
		c.Hidden = true
		root.AddCommand(c)
	}
	root.AddCommand(newConfigCommand())
	root.AddCommand(newRBACCommand())
	root.AddCommand(newVerbCommands()...)
	requireSubcommand(root)
	return root
}

func newVersionCommand() *cobra.Command {
	output := "text"
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the operator's version, commit, and its Go, Helm and Kubernetes client versions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			v := readVersion()
			return writeOutput(cmd.OutOrStdout(), output, v, func(w io.Writer) error {
				_, err := fmt.Fprint(w, v)
				return err
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", output, outputUsage())
	return cmd
}
