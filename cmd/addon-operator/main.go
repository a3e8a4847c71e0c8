// Command addon-operator runs platform addons, packaged as modules of Helm
// charts and hooks, in a Kubernetes cluster.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	if err := newRootCommand().Execute(); err != nil {
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "addon-operator",
		Short:         "Run platform addons (Helm charts with hooks) as modules in a Kubernetes cluster",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.AddCommand(newStartCommand(), newModulesCommand(), &cobra.Command{
		Use:   "version",
		Short: "Print the operator's version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), version)
		},
	})
	root.AddCommand(newDebugCommands()...)
	root.AddCommand(newProfileCommand())
	root.AddCommand(newConfigCommand())
	return root
}
