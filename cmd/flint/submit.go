package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/examples"
)

func submitCommand() *cobra.Command {
	var o flint.DriverOptions
	var example string
	cmd := &cobra.Command{
		Use:   "submit [flags] (--example NAME | JOB-BINARY) [args...]",
		Short: "Run a bundled example or a job binary built with flint.Main",
		Long: "Run a job. With --example the bundled job runs in this process; otherwise JOB-BINARY\n" +
			"(a program whose main calls flint.Main) is started with the same flags.\n\nBundled examples:\n  " +
			strings.Join(exampleUsages(), "\n  "),
		Example: "  flint submit --example pi                                  # embedded Mesos master, coarse-grained mode\n" +
			"  flint submit --example pi --conf flint.mesos.coarse=false  # fine-grained mode: every task a Mesos task\n" +
			"  flint submit --example pi --master mesos://mesos-master:5050\n" +
			"  flint submit --example pi --master 'local[4]'              # tasks in the driver process\n" +
			"  flint submit --master 'local[*]' --conf flint.task.maxFailures=2 ./myjob input.txt",
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Stderr = cmd.ErrOrStderr()
			if example != "" {
				ex, err := examples.Lookup(example)
				if err != nil {
					return err
				}
				return flint.RunDriver(cmd.Context(), o, args, ex.Run)
			}
			if len(args) == 0 {
				return fmt.Errorf("submit: give --example NAME (one of %s) or a job binary", strings.Join(examples.Names(), ", "))
			}
			return runBinary(cmd.Context(), o, args[0], args[1:])
		},
	}
	cmd.Flags().SetInterspersed(false)
	flint.AddDriverFlags(cmd, &o)
	cmd.Flags().StringVar(&example, "example", "", "run a bundled example: "+strings.Join(examples.Names(), ", "))
	return cmd
}

func exampleUsages() []string {
	var out []string
	for _, n := range examples.Names() {
		ex, _ := examples.Lookup(n)
		out = append(out, ex.Usage)
	}
	return out
}

// runBinary starts a user's job binary with the driver flags forwarded; its
// flint.Main parses them.
func runBinary(ctx context.Context, o flint.DriverOptions, bin string, args []string) error {
	var flags []string
	add := func(name, v string) {
		if v != "" {
			flags = append(flags, "--"+name, v)
		}
	}
	add("master", o.Master)
	add("config", o.ConfigFile)
	add("log-level", o.LogLevel)
	add("log-format", o.LogFormat)
	for _, c := range o.Conf {
		add("conf", c)
	}
	cmd := exec.CommandContext(ctx, bin, append(flags, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("submit %s: %w", bin, err)
	}
	return nil
}
