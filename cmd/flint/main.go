// Command flint is Flint's command-line tool: `flint submit` runs a bundled
// example or a user's job binary, `flint version` prints the build.
//
// The flint binary is also an executor for its bundled examples: started by
// an agent with FLINT_ROLE set, it runs that role instead of the CLI.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flint-mesos/flint"
)

func main() {
	if os.Getenv(flint.EnvRole) != "" {
		os.Exit(flint.Execute(os.Args[0], os.Args[1:], nil))
	}
	os.Exit(run(context.Background(), os.Args[1:]))
}

func run(ctx context.Context, args []string) int {
	root := &cobra.Command{
		Use:           "flint",
		Short:         "Flint runs Spark-style batch jobs written in Go on Apache Mesos",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       flint.VersionString(),
	}
	root.AddCommand(submitCommand(), versionCommand(), mesosCommand(), historyCommand(), shuffleServiceCommand(), dispatcherCommand(), statusCommand(), killCommand())
	root.AddCommand(devCommands()...)
	usageErrors(root)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil && strings.HasPrefix(err.Error(), "unknown command") {
		err = flint.Usage(err, "flint --help")
	}
	return flint.Report(os.Stderr, "flint", err)
}

// usageErrors makes flag and argument mistakes of cmd and its subcommands
// usage errors (exit code 2, a pointer to --help).
func usageErrors(cmd *cobra.Command) {
	flint.UsageErrors(cmd)
	for _, c := range cmd.Commands() {
		usageErrors(c)
	}
}

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), flint.VersionString())
		},
	}
}
