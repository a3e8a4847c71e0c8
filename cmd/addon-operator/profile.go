package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/addon-operator/addon-operator/pkg/server"
)

// newProfileCommand returns profile: a running operator's Go profile,
// fetched over its debug socket.
func newProfileCommand() *cobra.Command {
	socket, file, seconds := server.DefaultDebugSocket, "", 0
	cmd := &cobra.Command{
		Use:   "profile NAME",
		Short: "Write a running operator's Go profile (heap, goroutine, allocs, profile, trace...)",
		Long: `Write a running operator's Go profile, fetched over its debug socket, to
stdout or --file, for go tool pprof (or go tool trace for "trace"). NAME is
one of Go's profiles: heap, allocs, goroutine, block, mutex, threadcreate,
profile (CPU) or trace. Run it where the operator runs, e.g.

  kubectl exec deploy/addon-operator -- addon-operator profile heap > heap.pb.gz
  go tool pprof -top heap.pb.gz`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := applyEnv(cmd.Flags(), os.LookupEnv); err != nil {
				return err
			}
			if seconds < 0 {
				return fmt.Errorf("--seconds %d: want 0 or more", seconds)
			}
			data, err := server.NewSocketClient(socket).Profile(cmd.Context(), args[0], seconds)
			if errors.Is(err, server.ErrUnreachable) {
				return fmt.Errorf("%w; point --debug-socket (env ADDON_OPERATOR_DEBUG_SOCKET) at the operator's socket", err)
			}
			if err != nil {
				return fmt.Errorf("profile %s: %w", args[0], err)
			}
			if file == "" {
				_, err = cmd.OutOrStdout().Write(data)
				return err
			}
			return os.WriteFile(file, data, 0o600)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&socket, "debug-socket", socket, "the operator's debug socket (env ADDON_OPERATOR_DEBUG_SOCKET, DEBUG_UNIX_SOCKET)")
	fs.StringVarP(&file, "file", "f", "", "write the profile to this file instead of stdout")
	// -f is --values everywhere else; here it stays, hidden, for scripts.
	_ = fs.MarkShorthandDeprecated("file", "use --file")
	fs.IntVar(&seconds, "seconds", 0, "how long CPU profiles and traces record (Go's default, 30, when 0)")
	return cmd
}
