package flint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	_ "github.com/flint-mesos/flint/coarse" // the mesos-coarse backend
	"github.com/flint-mesos/flint/contract"
	_ "github.com/flint-mesos/flint/deploy/embedded" // the embedded master
	"github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/executor/coarseexec"
	"github.com/flint-mesos/flint/executor/fineexec"
	_ "github.com/flint-mesos/flint/fine" // the mesos-fine backend
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
	_ "github.com/flint-mesos/flint/framework/local" // the local[N] backend
	"github.com/flint-mesos/flint/framework/logging"
	"github.com/flint-mesos/flint/framework/progress"
)

// DriverFunc is a job's driver program: it runs jobs on fc. args are the
// command-line arguments left after Flint's flags.
type DriverFunc func(ctx context.Context, fc *framework.Context, args []string) error

// EnvRole names the role a binary was started in by an agent ("" = driver).
const EnvRole = contract.EnvRole

var (
	rolesMu sync.RWMutex
	roles   = map[string]func(ctx context.Context) error{}
)

func init() {
	RegisterRole(contract.RoleCoarse, coarseexec.Main)
	RegisterRole(contract.RoleFine, fineexec.Main)
}

// RegisterRole makes a non-driver role (an executor flavour) available to
// Main under FLINT_ROLE=name. This package registers both executor roles
// from its init; a program embedding another role calls it before Main.
func RegisterRole(name string, run func(ctx context.Context) error) {
	rolesMu.Lock()
	defer rolesMu.Unlock()
	roles[name] = run
}

// Main runs the program in the role its environment asks for and exits.
func Main(run DriverFunc) {
	framework.FreezeRegistry()
	os.Exit(Execute(os.Args[0], os.Args[1:], run))
}

// Execute is Main without the exit: it returns the process exit code.
func Execute(name string, args []string, run DriverFunc) int {
	if role := os.Getenv(EnvRole); role != "" {
		return runRole(role)
	}
	cmd := DriverCommand(name, "Run the job "+name, run)
	cmd.SetArgs(args)
	return Report(os.Stderr, filepath.Base(name), cmd.Execute())
}

func runRole(role string) int {
	rolesMu.RLock()
	run := roles[role]
	known := make([]string, 0, len(roles))
	for r := range roles {
		known = append(known, r)
	}
	rolesMu.RUnlock()
	if run == nil {
		sort.Strings(known)
		fmt.Fprintf(os.Stderr, "flint: %s=%q: this binary has no such role (known roles: %s)\n", EnvRole, role, strings.Join(known, ", "))
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "flint %s: %v\n", role, err)
		if errors.Is(err, executor.ErrBinaryMismatch) || errors.Is(err, executor.ErrRegistryMismatch) {
			return contract.ExitBinaryMismatch
		}
		return 1
	}
	return 0
}

// DriverOptions are the driver's command-line settings.
type DriverOptions struct {
	Master     string
	Conf       []string
	ConfigFile string
	LogLevel   string
	LogFormat  string
	ProxyUser  string // --proxy-user: flint.proxyUser
	Name       string // --name: flint.app.name
	// Program is flint.app.name's default: the program's name ("" for
	// this executable's base name; flint submit --example sets the
	// example's).
	Program string
	Stderr  io.Writer
	// Check, if set, validates the job's arguments before any cluster
	// starts (e.g. that input files exist); its error is a usage error.
	Check func(args []string) error
	// Help is the command whose --help a usage error points at.
	Help string
}

// AddDriverFlags registers --master, --conf, --config, --log-level,
// --log-format and --proxy-user on cmd.
func AddDriverFlags(cmd *cobra.Command, o *DriverOptions) {
	f := cmd.Flags()
	f.StringVar(&o.Master, "master", "", "master: embedded, mesos://host:port, mesos://zk://host:2181/path, local, local[N], local[*] or local[N,F] (default from flint.master: embedded)")
	f.StringArrayVar(&o.Conf, "conf", nil, "a configuration property key=value (repeatable)")
	f.StringVar(&o.ConfigFile, "config", "", "a configuration file (.yaml, .toml, .properties or .json)")
	f.StringVar(&o.LogLevel, "log-level", "", "log level: trace, debug, info, warn, error (default from flint.log.level)")
	f.StringVar(&o.LogFormat, "log-format", "", "log format: auto, text or json (default from flint.log.format)")
	f.StringVar(&o.Name, "name", "", "the application's name in Mesos, the UI and the history server (flint.app.name; default: the program's name)")
	f.StringVar(&o.ProxyUser, "proxy-user", "", "run the job's executors and tasks as this user while the framework registers as you (flint.proxyUser; needs flint.mesos.principal and the master's permission)")
}

// DriverCommand is a cobra command that runs run as a driver with Flint's flags.
func DriverCommand(use, short string, run DriverFunc) *cobra.Command {
	var o DriverOptions
	cmd := &cobra.Command{
		Use: use + " [flags] [args...] [-- job-args...]", Short: short, SilenceUsage: true, SilenceErrors: true,
		Version: VersionString(),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Stderr, o.Help = cmd.ErrOrStderr(), cmd.CommandPath()+" --help"
			return RunDriver(cmd.Context(), o, args, run)
		},
	}
	AddDriverFlags(cmd, &o)
	UsageErrors(cmd)
	return cmd
}

// UsageErrors makes cmd's flag and argument errors UsageErrors pointing at
// its --help, with a reminder that job arguments starting with '-' go
// after --, and sets the version template to the bare VersionString.
func UsageErrors(cmd *cobra.Command) {
	help := cmd.CommandPath() + " --help"
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return Usage(fmt.Errorf("%w (job arguments that start with '-' go after --)", err), help)
	})
	if cmd.Args != nil {
		check := cmd.Args
		cmd.Args = func(c *cobra.Command, args []string) error { return Usage(check(c, args), help) }
	}
	cmd.SetVersionTemplate("{{.Version}}\n")
}

// RunDriver loads configuration, sets up logging, runs o.Check on args,
// starts a Context (with the console progress bar when
// flint.ui.showConsoleProgress is on), runs run and stops the context.
// SIGINT and SIGTERM cancel the job's context (a second one kills the
// process); the error is then an *InterruptedError.
//
// RunDriver prints no error: its caller reports the one it returns once
// (Report). Configuration and o.Check errors are UsageErrors.
func RunDriver(ctx context.Context, o DriverOptions, args []string, run DriverFunc) (err error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	cfg, log, err := setup(o)
	if err != nil {
		if o.LogFormat == "json" {
			log, _ = logging.New(logging.Options{Format: "json", Out: o.Stderr})
			return reportJSON(log, Usage(err, o.Help))
		}
		return Usage(err, o.Help)
	}
	if cfg.String("flint.log.format") == "json" {
		defer func() { err = reportJSON(log, err) }()
	}
	if o.Check != nil {
		if err := o.Check(args); err != nil {
			return Usage(err, o.Help)
		}
	}
	ctx, interrupted, stop := notifyInterrupt(ctx)
	defer stop()
	fc, err := framework.NewContext(ctx, cfg, framework.WithLogger(log))
	if err != nil {
		return interruptedOr(interrupted(), err)
	}
	bar := startProgress(cfg, fc, o.Stderr)
	if bar != nil {
		log.SetOutput(bar.Writer(o.Stderr))
		fc.SetProgress(bar)
	}
	runErr := run(ctx, fc, args)
	if bar != nil {
		bar.Stop()
	}
	stopErr := fc.Stop(context.WithoutCancel(ctx)) // an interrupted run still tears its executors down
	if runErr == nil {
		runErr = stopErr
	}
	return interruptedOr(interrupted(), runErr)
}

// reportJSON logs err as one JSON line (stderr holds JSON lines only) and
// returns it marked as reported, so that Report prints nothing more.
func reportJSON(log logrus.FieldLogger, err error) error {
	if err == nil || log == nil {
		return err
	}
	msg := err.Error()
	var um userMessage
	if errors.As(err, &um) {
		msg = um.UserMessage()
	}
	log.WithField("exit_code", ExitCode(err)).Error(msg)
	return &reportedError{err}
}

// reportedError is an error already shown to the user.
type reportedError struct{ error }

func (e *reportedError) Unwrap() error { return e.error }

func interruptedOr(sig os.Signal, err error) error {
	if sig != nil {
		return &InterruptedError{Signal: sig, Err: err}
	}
	return err
}

// notifyInterrupt cancels ctx on the first SIGINT, SIGTERM or SIGPIPE and
// then lets the next SIGINT or SIGTERM take its default action (end the
// process). interrupted returns the signal received, if any.
//
// SIGPIPE is what writing to a closed pipe raises (`… | head -1` once head
// exited): by default Go ends the process on it when the pipe is stdout
// or stderr, leaving the framework and its executors running. Notified,
// the write fails with EPIPE instead and, when stdout or stderr is indeed
// a pipe without a reader (brokenPipe: sockets raise SIGPIPE too), the
// job's context ends and the driver stops its framework; later SIGPIPEs
// are ignored (every further write to the pipe raises one).
func notifyInterrupt(parent context.Context) (ctx context.Context, interrupted func() os.Signal, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	var (
		mu  sync.Mutex
		got os.Signal
	)
	note := func(s os.Signal) {
		mu.Lock()
		if got == nil {
			got = s
		}
		mu.Unlock()
		cancel()
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				signal.Stop(sigs)
				note(s)
			case s := <-pipe:
				if brokenPipe(1) || brokenPipe(2) { // not some socket's
					note(s)
				}
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			signal.Stop(sigs)
			close(done)
			cancel()
			mu.Lock()
			piped := got == syscall.SIGPIPE
			mu.Unlock()
			if piped {
				signal.Ignore(syscall.SIGPIPE) // the pipe stays closed: no end by a late write
			} else {
				signal.Stop(pipe)
			}
		})
	}
	interrupted = func() os.Signal {
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	return ctx, interrupted, stop
}

func setup(o DriverOptions) (*config.Config, *logrus.Logger, error) {
	var flags []config.FlagValue
	for _, f := range []config.FlagValue{
		{Flag: "--master", Key: "flint.master", Value: o.Master},
		{Flag: "--log-level", Key: "flint.log.level", Value: o.LogLevel},
		{Flag: "--log-format", Key: "flint.log.format", Value: o.LogFormat},
		{Flag: "--proxy-user", Key: "flint.proxyUser", Value: o.ProxyUser},
		{Flag: "--name", Key: "flint.app.name", Value: o.Name},
	} {
		if f.Value != "" {
			flags = append(flags, f)
		}
	}
	program := o.Program
	if program == "" {
		program = programName(os.Args[0])
	}
	var defaults map[string]string
	if program != "" {
		defaults = map[string]string{"flint.app.name": program}
	}
	cfg, err := config.Load(config.LoadOptions{File: o.ConfigFile, Environ: os.Environ(), Conf: o.Conf, Flags: flags, Defaults: defaults})
	if err != nil {
		return nil, nil, err
	}
	log, err := logging.New(logging.Options{Level: cfg.String("flint.log.level"), Format: cfg.String("flint.log.format"), Out: o.Stderr})
	if err != nil {
		return nil, nil, err
	}
	for _, w := range cfg.Warnings() {
		log.Warn(w)
	}
	return cfg, log, nil
}

// programName is the name of the program at path, as flint.app.name's
// default: its base name without ".exe"; "" for a test binary or go run's
// temporary one, which name nothing the user chose.
func programName(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".exe")
	if name == "." || name == string(filepath.Separator) || strings.HasSuffix(name, ".test") {
		return ""
	}
	return name
}

func startProgress(cfg *config.Config, fc *framework.Context, out io.Writer) *progress.Bar {
	// With JSON logs stderr carries JSON lines only: no progress bar.
	if !cfg.Bool("flint.ui.showConsoleProgress") || cfg.String("flint.log.format") == "json" {
		return nil
	}
	bar := progress.New(out, fc.ActiveStages, progress.Options{Terminal: progress.IsTerminal(out), Width: progress.TerminalWidth(out)})
	bar.Start()
	return bar
}
