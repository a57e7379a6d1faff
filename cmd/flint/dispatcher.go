package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/deploy/dispatcher"
	"github.com/flint-mesos/flint/framework/logging"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/mesosconn/detector"
	"github.com/flint-mesos/flint/internal/localip"
	"github.com/flint-mesos/flint/uri/fileserver"
)

// defaultDispatcherDir is where the dispatcher keeps its records, uploads and
// keys, and where its token file is (which flint submit, status and kill read
// by default): ~/.flint/dispatcher.
func defaultDispatcherDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "flint-dispatcher")
	}
	return filepath.Join(home, ".flint", "dispatcher")
}

func defaultTokenFile() string { return filepath.Join(defaultDispatcherDir(), "token") }

type dispatcherFlags struct {
	master, host, advertise, store, zk, tokenFile, name, role, principal, secretFile, codec, history string
	logLevel, logFormat                                                                              string
	port, maxDrivers, maxRetries                                                                     int
	noAuth                                                                                           bool
	failover, minBackoff, maxBackoff, zkSession                                                      time.Duration
}

func dispatcherCommand() *cobra.Command {
	var f dispatcherFlags
	cmd := &cobra.Command{
		Use:   "dispatcher --master mesos://HOST:PORT",
		Short: "Run the cluster-mode dispatcher: a Mesos framework that runs submitted drivers as Mesos tasks",
		Long: "Run Flint's cluster-mode dispatcher (Spark's MesosClusterDispatcher): it accepts\n" +
			"`flint submit --deploy-mode cluster --master mesos://THIS-HOST:PORT` submissions, queues them,\n" +
			"launches each driver as a Mesos task when an offer fits it, relaunches supervised ones that\n" +
			"fail, keeps its records in --store across restarts and lists its drivers at http://HOST:PORT/.\n" +
			"Submitters authenticate with the token in --token-file (created when missing, mode 0600).",
		Example: "  flint dispatcher --master mesos://127.0.0.1:5050\n" +
			"  flint dispatcher --master mesos://zk://zk1:2181/mesos --port 7077 --max-drivers 4 --role batch",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDispatcher(cmd.Context(), f) },
	}
	fs := cmd.Flags()
	fs.StringVar(&f.master, "master", "", "the Mesos master drivers and the dispatcher use: mesos://host:port or mesos://zk://…")
	fs.StringVar(&f.host, "host", "127.0.0.1", "address the REST API, the page and the file server listen on")
	fs.IntVar(&f.port, "port", 7077, "port of the REST API and the page (Spark's dispatcher port)")
	fs.StringVar(&f.advertise, "advertise-host", "", "host agents fetch uploaded programs from (default: this host's address towards the master)")
	fs.StringVar(&f.store, "store", defaultDispatcherDir(), "directory of the dispatcher's records, uploaded programs and secrets key")
	fs.StringVar(&f.zk, "zk", "", "keep the records and framework id in ZooKeeper (Spark's spark.deploy.zookeeper.url) and elect a leader among the dispatchers started with the same URL (the others are standbys): zk://host:2181[,host:2181]/path (default path /flint/dispatcher); uploads, the secrets key and the token stay in --store, which standbys must share (the same directory, or copies of it)")
	fs.DurationVar(&f.zkSession, "zk-session-timeout", 10*time.Second, "ZooKeeper session timeout of the records and of the leader election (--zk): a killed leader's standby takes over this long after")
	fs.IntVar(&f.maxDrivers, "max-drivers", 0, "drivers launched or running at once; 0 is no limit (the rest wait in FIFO order)")
	fs.IntVar(&f.maxRetries, "max-retries", 3, "relaunches of a supervised driver that fails")
	fs.DurationVar(&f.minBackoff, "min-backoff", time.Second, "delay before a supervised driver's first relaunch (doubled per relaunch)")
	fs.DurationVar(&f.maxBackoff, "max-backoff", time.Minute, "cap of the relaunch delay")
	fs.StringVar(&f.tokenFile, "token-file", defaultTokenFile(), "file holding the submitters' token (created when missing)")
	fs.BoolVar(&f.noAuth, "no-auth", false, "serve anyone who can reach the port: no token (trusted networks only)")
	fs.StringVar(&f.name, "name", "flint-dispatcher", "the dispatcher's Mesos framework name")
	fs.StringVar(&f.role, "role", "", "Mesos role(s) the drivers' tasks use, comma separated (default *)")
	fs.StringVar(&f.principal, "principal", "", "Mesos principal the dispatcher authenticates as")
	fs.StringVar(&f.secretFile, "secret-file", "", "file holding the principal's secret")
	fs.DurationVar(&f.failover, "failover-timeout", 7*24*time.Hour, "how long the master keeps the dispatcher's drivers while it is away")
	fs.StringVar(&f.codec, "codec", "protobuf", "Mesos API codec: protobuf or json")
	fs.StringVar(&f.history, "history-url", "", "URL of a `flint history` serving the drivers' event logs, linked from the page")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level")
	fs.StringVar(&f.logFormat, "log-format", "auto", "log format: auto, text or json")
	cmd.AddCommand(execDriverCommand())
	return cmd
}

// execDriverCommand is the first process of a driver task (hidden): it checks
// the fetched program and execs it.
func execDriverCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:                "exec-driver [--sha256 HEX] -- PROGRAM [ARGS...]",
		Short:              "Check a fetched driver program and run it (the dispatcher's driver tasks)",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := dispatcher.ExecDriver(args, os.Stderr); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}
	return cmd
}

func (f dispatcherFlags) mesosConfig() (mesosconn.Config, error) {
	if f.master == "" {
		return mesosconn.Config{}, flint.Usage(errors.New("dispatcher: --master mesos://HOST:PORT is required"), "flint dispatcher --help")
	}
	if _, err := detector.ParseMaster(f.master); err != nil {
		return mesosconn.Config{}, flint.Usage(fmt.Errorf("dispatcher: --master: %w", err), "flint dispatcher --help")
	}
	c := mesosconn.Config{Master: f.master, Name: f.name, Principal: f.principal, FailoverTimeout: f.failover, User: mesosconn.DefaultUser()}
	for r := range strings.SplitSeq(f.role, ",") {
		if r = strings.TrimSpace(r); r != "" {
			c.Roles = append(c.Roles, r)
		}
	}
	switch f.codec {
	case "protobuf":
	case "json":
		c.Codec = mesosconn.JSON
	default:
		return c, flint.Usage(fmt.Errorf("dispatcher: --codec %q: want protobuf or json", f.codec), "flint dispatcher --help")
	}
	if f.secretFile != "" {
		b, err := os.ReadFile(f.secretFile)
		if err != nil {
			return c, fmt.Errorf("dispatcher: --secret-file: %w", err)
		}
		c.Secret = strings.TrimRight(string(b), "\r\n")
	}
	return c, nil
}

// loadOrCreateToken reads the token file, creating it (0600) with a new token
// when missing.
func loadOrCreateToken(path string) (string, error) {
	if tok, err := dispatcher.ReadToken(path); err == nil && tok != "" {
		return tok, nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("dispatcher: token: %w", err)
	}
	tok := fileserver.NewToken()
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("dispatcher: token: %w", err)
	}
	return tok, nil
}

func runDispatcher(ctx context.Context, f dispatcherFlags) error {
	log, err := logging.New(logging.Options{Level: f.logLevel, Format: f.logFormat, Out: os.Stderr})
	if err != nil {
		return flint.Usage(err, "flint dispatcher --help")
	}
	mc, err := f.mesosConfig()
	if err != nil {
		return err
	}
	token := ""
	if !f.noAuth {
		if token, err = loadOrCreateToken(f.tokenFile); err != nil {
			return err
		}
	}
	var store dispatcher.Store
	var elector *dispatcher.Elector
	if f.zk != "" {
		servers, root, err := dispatcher.ParseZK(f.zk)
		if err != nil {
			return flint.Usage(err, "flint dispatcher --help")
		}
		zs, err := dispatcher.NewZKStore(servers, root, f.zkSession)
		if err != nil {
			return err
		}
		defer zs.Close()
		store = zs
		log.Infof("dispatcher records in ZooKeeper %s at %s", strings.Join(servers, ","), root)
		if elector, err = dispatcher.NewElector(servers, root, f.zkSession, "http://"+net.JoinHostPort(f.restHost(), fmt.Sprint(f.port))); err != nil {
			return err
		}
		defer elector.Close()
	} else if store, err = dispatcher.NewDirStore(filepath.Join(f.store, "records")); err != nil {
		return err
	}
	bins, err := dispatcher.NewBinaries(filepath.Join(f.store, "binaries"))
	if err != nil {
		return err
	}
	key, err := dispatcher.LoadOrCreateKey(filepath.Join(f.store, "secrets.key"))
	if err != nil {
		return err
	}
	sealer, err := dispatcher.NewSealer(key)
	if err != nil {
		return err
	}
	advertise := f.advertise
	if advertise == "" {
		if u, err := detector.ParseMaster(f.master); err == nil {
			hp := u.Addr
			if hp == "" && len(u.ZKServers) > 0 {
				hp = u.ZKServers[0]
			}
			h, _, _ := net.SplitHostPort(hp)
			advertise = localip.TowardsOrEmpty(h)
		}
	}
	files, err := fileserver.New(fileserver.Config{Token: fileserver.NewToken(), AdvertiseHost: advertise, Logger: log})
	if err != nil {
		return err
	}
	flis, err := net.Listen("tcp", net.JoinHostPort(f.host, "0"))
	if err != nil {
		return fmt.Errorf("dispatcher: file server: %w", err)
	}
	if err := files.Serve(flis); err != nil {
		return err
	}
	defer files.Close(context.Background())
	lis, err := net.Listen("tcp", net.JoinHostPort(f.host, fmt.Sprint(f.port)))
	if err != nil {
		return fmt.Errorf("dispatcher: %w", err)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	scfg := dispatcher.ServerConfig{Token: token, Anonymous: f.noAuth}
	var serving atomic.Pointer[http.Handler]
	srv := &http.Server{ReadHeaderTimeout: 30 * time.Second,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*serving.Load()).ServeHTTP(w, r) })}
	var lost <-chan struct{}
	if elector != nil {
		sh, err := dispatcher.StandbyHandler(scfg, elector.Leader)
		if err != nil {
			lis.Close()
			return err
		}
		serving.Store(&sh)
		go func() { _ = srv.Serve(lis) }()
		log.Infof("standby on http://%s until it wins the ZooKeeper election", lis.Addr())
		if lost, err = elector.Lead(ctx); err != nil {
			_ = srv.Close()
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		log.Info("leading: this dispatcher won the ZooKeeper election")
	}
	d, err := dispatcher.New(dispatcher.Config{Mesos: mc, Store: store, Binaries: bins, Sealer: sealer, Files: files,
		Core:   dispatcher.CoreConfig{MaxDrivers: f.maxDrivers, MaxRetries: f.maxRetries, MinBackoff: f.minBackoff, MaxBackoff: f.maxBackoff},
		Logger: log, HistoryURL: f.history})
	if err != nil {
		_ = srv.Close()
		return err
	}
	if err := d.Start(ctx); err != nil {
		_ = srv.Close()
		lis.Close()
		return err
	}
	scfg.Page = dispatcher.PageConfig{Master: d.MasterAddr, FrameworkID: d.FrameworkID, HistoryURL: f.history, DriverUIs: d.DriverUIs}
	h, err := dispatcher.Handler(d, scfg)
	if err != nil {
		return err
	}
	serving.Store(&h)
	if elector == nil {
		go func() { _ = srv.Serve(lis) }()
	}
	auth := "token in " + f.tokenFile
	if f.noAuth {
		auth = "no authentication (--no-auth)"
	}
	log.Infof("flint dispatcher on http://%s (%s); submit with: flint submit --deploy-mode cluster --master mesos://%s …", lis.Addr(), auth, lis.Addr())
	var end error
	select {
	case <-ctx.Done():
	case <-d.Done():
	case <-lost:
		end = dispatcher.ErrLostLeadership
		log.Error("lost leadership in ZooKeeper: stopping (the framework stays registered for the new leader)")
	}
	log.Info("shutting down (the framework stays registered: running drivers keep running)")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return errors.Join(end, d.Stop(sctx))
}

// restHost is the host standbys name as the leader's: --advertise-host, else
// --host unless it is a wildcard, else this host's name.
func (f dispatcherFlags) restHost() string {
	if f.advertise != "" {
		return f.advertise
	}
	if ip := net.ParseIP(f.host); f.host != "" && (ip == nil || !ip.IsUnspecified()) {
		return f.host
	}
	if h, err := os.Hostname(); err == nil {
		return h
	}
	return f.host
}
