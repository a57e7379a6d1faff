package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/internal/devtools/benchdata"
	"github.com/flint-mesos/flint/internal/devtools/cpuburn"
)

// devCommands are the hidden subcommands the repository's own tooling
// runs (make generate, scripts/bench-datasets.sh, .ci/stress), so that
// cmd/flint is the only main package.
func devCommands() []*cobra.Command {
	return []*cobra.Command{genConfigDocCommand(), benchdataCommand(), cpuburnCommand()}
}

func genConfigDocCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "gen-config-doc [FILE]",
		Short:  "Write docs/configuration.md (or FILE) from the configuration key table (make generate)",
		Hidden: true,
		Args:   cobra.MaximumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			out := "docs/configuration.md"
			if len(args) == 1 {
				out = args[0]
			}
			if err := os.WriteFile(out, config.Markdown(), 0o644); err != nil {
				return fmt.Errorf("writing the configuration reference: %w", err)
			}
			return nil
		},
	}
}

func benchdataCommand() *cobra.Command {
	return &cobra.Command{
		Use:                "benchdata " + benchdata.Usage,
		Short:              "Generate the dataset benchmarks' inputs and run their one-goroutine baseline",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageIf(benchdata.Run(args, cmd.OutOrStdout()), benchdata.ErrUsage, "flint benchdata")
		},
	}
}

func cpuburnCommand() *cobra.Command {
	return &cobra.Command{
		Use:                "cpuburn [-procs N] [-max 3h]",
		Short:              "Keep every CPU busy until interrupted or the parent exits (make stress)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageIf(cpuburn.Run(cmd.Context(), args), cpuburn.ErrUsage, "flint cpuburn")
		},
	}
}

// usageIf makes err a usage error (exit code 2) when it wraps target.
func usageIf(err, target error, help string) error {
	if errors.Is(err, target) {
		return flint.Usage(err, help)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", help, err)
	}
	return nil
}
