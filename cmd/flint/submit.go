package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/examples"
)

func submitCommand() *cobra.Command {
	var o flint.DriverOptions
	var example string
	var cf clusterFlags
	cmd := &cobra.Command{
		Use:   "submit [flags] (--example NAME | JOB-BINARY | JOB-SOURCE-DIR) [args...] [-- job-args...]",
		Short: "Run a bundled example or a job built with flint.Main",
		Long: "Run a job. With --example the bundled job runs in this process; otherwise JOB-BINARY\n" +
			"(a program whose main calls flint.Main) is started with the same flags. A directory (or a\n" +
			".go file) is a job's source: it is built with `go build` first.\n\n" +
			"Flint's flags go before the job's first argument; job arguments that start with '-' go\nafter --.\n\nBundled examples:\n  " +
			strings.Join(exampleUsages(), "\n  "),
		Example: "  flint submit --example pi                                  # embedded Mesos master, coarse-grained mode\n" +
			"  flint submit --example pi --conf flint.mesos.coarse=false  # fine-grained mode: every task a Mesos task\n" +
			"  flint submit --example pi --master mesos://mesos-master:5050\n" +
			"  flint submit --example pi --master 'local[4]'              # tasks in the driver process\n" +
			"  flint submit --example wordcount -- --top 5 README.md\n" +
			"  flint submit --example sort -- --input data.txt --output sorted/\n" +
			"  flint submit --master 'local[*]' --conf flint.task.maxFailures=2 ./myjob input.txt\n" +
			"  flint submit --deploy-mode cluster --master mesos://dispatcher:7077 --supervise ./myjob input.txt  # prints the submission id",
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Stderr, o.Help = cmd.ErrOrStderr(), cmd.CommandPath()+" --help"
			if err := checkTrailingFlags(cmd.Flags(), args); err != nil {
				return flint.Usage(err, o.Help)
			}
			if err := cf.check(cmd.Flags()); err != nil {
				return flint.Usage(err, o.Help)
			}
			if cf.deployMode == "cluster" {
				return clusterSubmit(cmd.Context(), o, cf, example, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
			}
			conf, err := clientFiles(cf.files, o.Conf)
			if err != nil {
				return flint.Usage(err, o.Help)
			}
			o.Conf = conf
			if example != "" {
				ex, err := examples.Lookup(example)
				if err != nil {
					return flint.Usage(err, o.Help)
				}
				o.Check = ex.Check
				o.Program = example
				return flint.RunDriver(cmd.Context(), o, dropDash(args), ex.Run)
			}
			if len(args) == 0 {
				return flint.Usage(fmt.Errorf("submit: give --example NAME (one of %s) or a job binary", strings.Join(examples.Names(), ", ")), o.Help)
			}
			bin, err := jobBinary(cmd.Context(), args[0], cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runBinary(cmd.Context(), o, bin, args[1:])
		},
	}
	cmd.Flags().SetInterspersed(false)
	flint.AddDriverFlags(cmd, &o)
	cmd.Flags().StringVar(&example, "example", "", "run a bundled example: "+strings.Join(examples.Names(), ", "))
	cf.register(cmd.Flags())
	return cmd
}

// checkTrailingFlags refuses one of submit's own flags placed after the
// job's first argument (before any --): it would silently reach the job.
func checkTrailingFlags(fs *pflag.FlagSet, args []string) error {
	for i, a := range args {
		if a == "--" {
			return nil
		}
		if i == 0 || !strings.HasPrefix(a, "-") || a == "-" {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var f *pflag.Flag
		if strings.HasPrefix(a, "--") {
			f = fs.Lookup(name)
		} else if len(name) == 1 {
			f = fs.ShorthandLookup(name)
		}
		if f == nil || f.Name == "help" {
			continue
		}
		return fmt.Errorf("submit: flag --%s comes after the job's first argument %q, so it would be passed to the job; "+
			"put Flint's flags before %q, or write -- before it to pass it to the job", f.Name, args[0], args[0])
	}
	return nil
}

// dropDash removes the first "--" of an example's arguments: submit's
// flag parsing stopped at the first positional, so it is still there.
func dropDash(args []string) []string {
	for i, a := range args {
		if a == "--" {
			return append(append([]string(nil), args[:i]...), args[i+1:]...)
		}
	}
	return args
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
	add("proxy-user", o.ProxyUser)
	add("name", o.Name)
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
