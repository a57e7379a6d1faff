package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/deploy/dispatcher"
)

// clusterFlags are flint submit's cluster-mode flags.
type clusterFlags struct {
	deployMode, driverMemory, tokenFile string
	driverCores                         float64
	supervise                           bool
	files                               []string // --files, both modes
}

func (c *clusterFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&c.deployMode, "deploy-mode", "client", "client: the driver runs here; cluster: hand the application to the dispatcher at --master mesos://HOST:PORT, which runs the driver as a Mesos task")
	fs.BoolVar(&c.supervise, "supervise", false, "cluster mode: relaunch the driver when it fails (not when it is killed or succeeds)")
	fs.Float64Var(&c.driverCores, "driver-cores", 0, "cluster mode: cpus of the driver's task (default 1)")
	fs.StringVar(&c.driverMemory, "driver-memory", "", "cluster mode: memory of the driver's task, e.g. 512m or 2g (default 1g)")
	fs.StringVar(&c.tokenFile, "token-file", defaultTokenFile(), "cluster mode: file holding the dispatcher's token")
	fs.StringSliceVar(&c.files, "files", nil, "comma-separated files every task can read (Spark's --files; flint.files): local paths or http(s) URLs; tasks open them with TaskContextOf(ctx).File(base name); in cluster mode local ones are uploaded to the dispatcher and placed in the driver's working directory too")
}

// isURL reports whether a --files entry is fetched by executors themselves.
func isURL(f string) bool { return strings.HasPrefix(f, "http://") || strings.HasPrefix(f, "https://") }

// clientFiles turns --files into flint.files for a driver that runs here:
// local paths made absolute (the job binary may run elsewhere in the tree)
// and checked, URLs as given.
func clientFiles(files, conf []string) ([]string, error) {
	if len(files) == 0 {
		return conf, nil
	}
	if err := filesConfConflict(conf); err != nil {
		return nil, err
	}
	out := make([]string, 0, len(files))
	for _, f := range files {
		if isURL(f) {
			out = append(out, f)
			continue
		}
		abs, err := localFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, abs)
	}
	return append(slices.Clone(conf), "flint.files="+strings.Join(out, ",")), nil
}

// errFilesTwice: --files beside --conf flint.files (which would win is not obvious).
var errFilesTwice = errors.New("submit: give files with --files or with --conf flint.files, not both")

func filesConfConflict(conf []string) error {
	for _, kv := range conf {
		if strings.HasPrefix(kv, "flint.files=") {
			return errFilesTwice
		}
	}
	return nil
}

// localFile checks that a --files path names a regular file and returns it
// absolute.
func localFile(f string) (string, error) {
	abs, err := filepath.Abs(f)
	if err != nil {
		return "", fmt.Errorf("submit: --files %s: %w", f, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("submit: --files: %w", err)
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("submit: --files %s: not a regular file", f)
	}
	return abs, nil
}

// uploadFiles sends --files' local files to the dispatcher (content
// addressed, as the program) and lists the http(s) ones in flint.files.
func uploadFiles(ctx context.Context, client *dispatcher.Client, files []string, req *dispatcher.CreateRequest) error {
	if len(files) == 0 {
		return nil
	}
	if _, ok := req.FlintProperties["flint.files"]; ok {
		return errFilesTwice
	}
	var urls []string
	for _, f := range files {
		if isURL(f) {
			urls = append(urls, f)
			continue
		}
		abs, err := localFile(f)
		if err != nil {
			return err
		}
		res, err := client.Upload(ctx, abs)
		if err != nil {
			return fmt.Errorf("submit: --files %s: %w", f, err)
		}
		req.Files = append(req.Files, dispatcher.FileRef{Resource: res, Name: filepath.Base(abs)})
	}
	if len(urls) > 0 {
		req.FlintProperties["flint.files"] = strings.Join(urls, ",")
	}
	return nil
}

// check refuses cluster-mode flags in client mode.
func (c *clusterFlags) check(fs *pflag.FlagSet) error {
	switch c.deployMode {
	case "cluster":
		return nil
	case "client":
	default:
		return fmt.Errorf("submit: --deploy-mode %q: want client or cluster", c.deployMode)
	}
	for _, n := range []string{"supervise", "driver-cores", "driver-memory", "token-file"} {
		if fs.Changed(n) {
			return fmt.Errorf("submit: --%s needs --deploy-mode cluster", n)
		}
	}
	return nil
}

// clusterSubmit hands an application to a dispatcher and prints its submission
// id: a bundled example runs in this flint binary, uploaded; a job binary is
// uploaded (a job source directory built first); an http(s) URL is fetched by
// the agent.
func clusterSubmit(ctx context.Context, o flint.DriverOptions, cf clusterFlags, example string, args []string, stdout, stderr io.Writer) error {
	help := "flint submit --help"
	if !strings.HasPrefix(o.Master, "mesos://") {
		return flint.Usage(errors.New("submit: --deploy-mode cluster needs --master mesos://HOST:PORT, the dispatcher's address"), help)
	}
	if o.ConfigFile != "" {
		return flint.Usage(errors.New("submit: --config is not sent in cluster mode (the file is on this host); give its settings with --conf"), help)
	}
	token, err := dispatcher.ReadToken(cf.tokenFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	client, err := dispatcher.ClientFor(o.Master, token)
	if err != nil {
		return flint.Usage(err, help)
	}
	req := dispatcher.CreateRequest{FlintProperties: map[string]string{}, ClientFlintVersion: flint.Version}
	for _, kv := range o.Conf {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return flint.Usage(fmt.Errorf("submit: --conf %q: want key=value", kv), help)
		}
		req.FlintProperties[k] = v
	}
	for k, v := range map[string]string{"flint.app.name": o.Name, "flint.proxyUser": o.ProxyUser, "flint.log.level": o.LogLevel, "flint.log.format": o.LogFormat} {
		if v != "" {
			req.FlintProperties[k] = v
		}
	}
	if cf.supervise {
		req.FlintProperties["flint.driver.supervise"] = "true"
	}
	if cf.driverCores > 0 {
		req.FlintProperties["flint.driver.cores"] = strconv.FormatFloat(cf.driverCores, 'f', -1, 64)
	}
	if cf.driverMemory != "" {
		req.FlintProperties["flint.driver.memory"] = cf.driverMemory
	}
	var program string
	switch {
	case example != "":
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		program, req.Example, req.AppResourceName, req.AppArgs = exe, example, "flint", dropDash(args)
	case len(args) == 0:
		return flint.Usage(errors.New("submit: give --example NAME or a job binary (a local file or an http(s) URL)"), help)
	case strings.HasPrefix(args[0], "http://") || strings.HasPrefix(args[0], "https://"):
		req.AppResource, req.AppArgs = args[0], dropDash(args[1:])
	default:
		bin, err := jobBinary(ctx, args[0], stderr)
		if err != nil {
			return err
		}
		program, req.AppArgs = bin, dropDash(args[1:])
	}
	if program != "" {
		if req.AppResource, err = client.Upload(ctx, program); err != nil {
			return err
		}
	}
	if err := uploadFiles(ctx, client, cf.files, &req); err != nil {
		return err
	}
	id, err := client.Create(ctx, req)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, id)
	fmt.Fprintf(stderr, "submitted %s to the dispatcher at %s; follow it with: flint status --master %s %s\n", id, client.URL, o.Master, id)
	return nil
}

// dispatcherClientFlags are flint status's and kill's flags.
type dispatcherClientFlags struct{ master, tokenFile string }

func (f *dispatcherClientFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.master, "master", "mesos://127.0.0.1:7077", "the dispatcher's address")
	fs.StringVar(&f.tokenFile, "token-file", defaultTokenFile(), "file holding the dispatcher's token")
}

func (f *dispatcherClientFlags) client() (*dispatcher.Client, error) {
	token, err := dispatcher.ReadToken(f.tokenFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return dispatcher.ClientFor(f.master, token)
}

func statusCommand() *cobra.Command {
	var f dispatcherClientFlags
	var wait, asJSON bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status [flags] [SUBMISSION-ID]",
		Short: "Show a cluster-mode driver's state (all drivers without an id)",
		Example: "  flint status driver-20261202080000-1a2b\n" +
			"  flint status --wait driver-20261202080000-1a2b   # until it ends; exit 0 only if FINISHED",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return flint.Usage(err, "flint status --help")
			}
			out := cmd.OutOrStdout()
			if len(args) == 0 {
				all, err := c.List(cmd.Context())
				if err != nil {
					return err
				}
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				for _, st := range all {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", st.SubmissionID, st.DriverState, st.Message)
				}
				return tw.Flush()
			}
			ctx := cmd.Context()
			var st dispatcher.StatusResponse
			if wait {
				ctx, cancel := context.WithTimeout(ctx, timeout)
				defer cancel()
				st, err = c.Wait(ctx, args[0], 500*time.Millisecond)
			} else {
				st, err = c.Status(ctx, args[0])
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(out, st)
			}
			fmt.Fprintf(out, "%s %s", st.SubmissionID, st.DriverState)
			if st.Message != "" {
				fmt.Fprintf(out, ": %s", st.Message)
			}
			fmt.Fprintln(out)
			if wait && st.DriverState != dispatcher.Finished {
				return fmt.Errorf("status: %s ended %s", st.SubmissionID, st.DriverState)
			}
			return nil
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the driver ends; fail unless it FINISHED")
	cmd.Flags().DurationVar(&timeout, "timeout", 24*time.Hour, "with --wait: give up after this long")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the dispatcher's JSON status response")
	return cmd
}

func killCommand() *cobra.Command {
	var f dispatcherClientFlags
	cmd := &cobra.Command{
		Use:   "kill [flags] SUBMISSION-ID",
		Short: "Kill a cluster-mode driver (queued: at once; running: its Mesos task)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client()
			if err != nil {
				return flint.Usage(err, "flint kill --help")
			}
			resp, err := c.Kill(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), resp.Message)
			return nil
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
