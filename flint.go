package flint

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"

	_ "github.com/flint-mesos/flint/coarse"          // the mesos-coarse backend
	_ "github.com/flint-mesos/flint/deploy/embedded" // the embedded master
	coarseexec "github.com/flint-mesos/flint/executor/coarse"
	fineexec "github.com/flint-mesos/flint/executor/fine"
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
const EnvRole = "FLINT_ROLE"

var (
	rolesMu sync.RWMutex
	roles   = map[string]func(ctx context.Context) error{}
)

func init() {
	RegisterRole(coarseexec.Role, coarseexec.Main)
	RegisterRole(fineexec.Role, fineexec.Main)
}

// RegisterRole makes a non-driver role (an executor flavour) available to
// Main under FLINT_ROLE=name. Executor packages call it from init.
func RegisterRole(name string, run func(ctx context.Context) error) {
	rolesMu.Lock()
	defer rolesMu.Unlock()
	roles[name] = run
}

// Main runs the program in the role its environment asks for and exits.
func Main(run DriverFunc) {
	os.Exit(Execute(os.Args[0], os.Args[1:], run))
}

// Execute is Main without the exit: it returns the process exit code.
func Execute(name string, args []string, run DriverFunc) int {
	if role := os.Getenv(EnvRole); role != "" {
		return runRole(role)
	}
	cmd := DriverCommand(name, "Run the job "+name, run)
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		return 1
	}
	return 0
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
	Stderr     io.Writer
}

// AddDriverFlags registers --master, --conf, --config, --log-level and
// --log-format on cmd.
func AddDriverFlags(cmd *cobra.Command, o *DriverOptions) {
	f := cmd.Flags()
	f.StringVar(&o.Master, "master", "", "master: embedded, mesos://host:port, mesos://zk://host:2181/path, local, local[N], local[*] or local[N,F] (default from flint.master: embedded)")
	f.StringArrayVar(&o.Conf, "conf", nil, "a configuration property key=value (repeatable)")
	f.StringVar(&o.ConfigFile, "config", "", "a configuration file (.yaml, .toml, .properties or .json)")
	f.StringVar(&o.LogLevel, "log-level", "", "log level: trace, debug, info, warn, error (default from flint.log.level)")
	f.StringVar(&o.LogFormat, "log-format", "", "log format: auto, text or json (default from flint.log.format)")
}

// DriverCommand is a cobra command that runs run as a driver with Flint's flags.
func DriverCommand(use, short string, run DriverFunc) *cobra.Command {
	var o DriverOptions
	cmd := &cobra.Command{
		Use: use + " [flags] [args...]", Short: short, SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Stderr = cmd.ErrOrStderr()
			return RunDriver(cmd.Context(), o, args, run)
		},
	}
	AddDriverFlags(cmd, &o)
	return cmd
}

// RunDriver loads configuration, sets up logging, starts a Context (with the
// console progress bar when flint.ui.showConsoleProgress is on), runs run
// and stops the context. SIGINT and SIGTERM cancel the job's context.
func RunDriver(ctx context.Context, o DriverOptions, args []string, run DriverFunc) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	cfg, log, err := setup(o)
	if err != nil {
		fmt.Fprintln(o.Stderr, err)
		return err
	}
	fc, err := framework.NewContext(cfg, framework.WithLogger(log))
	if err != nil {
		log.Error(err)
		return err
	}
	bar := startProgress(cfg, fc, o.Stderr)
	if bar != nil {
		log.SetOutput(bar.Writer(o.Stderr))
		fc.SetProgress(bar)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	runErr := run(ctx, fc, args)
	stop()
	if bar != nil {
		bar.Stop()
	}
	stopErr := fc.Stop()
	if runErr != nil {
		log.Error(runErr)
		return runErr
	}
	return stopErr
}

func setup(o DriverOptions) (*config.Config, *logrus.Logger, error) {
	conf := append([]string(nil), o.Conf...)
	if o.Master != "" {
		conf = append(conf, "flint.master="+o.Master)
	}
	if o.LogLevel != "" {
		conf = append(conf, "flint.log.level="+o.LogLevel)
	}
	if o.LogFormat != "" {
		conf = append(conf, "flint.log.format="+o.LogFormat)
	}
	cfg, err := config.Load(config.LoadOptions{File: o.ConfigFile, Environ: os.Environ(), Conf: conf})
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

func startProgress(cfg *config.Config, fc *framework.Context, out io.Writer) *progress.Bar {
	if !cfg.Bool("flint.ui.showConsoleProgress") {
		return nil
	}
	bar := progress.New(out, fc.ActiveStages, progress.Options{Terminal: progress.IsTerminal(out), Width: progress.TerminalWidth(out)})
	bar.Start()
	return bar
}
