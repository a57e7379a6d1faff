package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/framework/logging"
)

func mesosCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mesos",
		Short: "Run minimesos, Flint's lightweight Mesos-compatible master and agents",
	}
	cmd.AddCommand(mesosMasterCommand(), mesosLocalCommand(), mesosAgentCommand(), mesosLogsCommand())
	return cmd
}

// masterFlags are the flags shared by `mesos master` and `mesos local`.
type masterFlags struct {
	listen, id, hostname, credentials, weights, agentSecretFile, logLevel, logFormat string
	heartbeat, allocation, offerTimeout, pingInterval                                time.Duration
	allocateOnRelease                                                                bool
	maxOffers, maxMissedPings                                                        int
}

func (f *masterFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.listen, "listen", "127.0.0.1:5050", "address the master listens on")
	fs.StringVar(&f.id, "id", "", "master id (default: a fresh UUID)")
	fs.StringVar(&f.hostname, "hostname", "", "hostname advertised in MasterInfo (default: the listen address when it is a specific one, else os.Hostname)")
	fs.DurationVar(&f.heartbeat, "heartbeat-interval", 15*time.Second, "interval between HEARTBEAT events")
	fs.DurationVar(&f.allocation, "allocation-interval", time.Second, "interval between batch allocations")
	fs.BoolVar(&f.allocateOnRelease, "allocate-on-release", false, "also offer resources as soon as they are freed (low latency)")
	fs.DurationVar(&f.offerTimeout, "offer-timeout", 0, "rescind offers not answered within this time (0: never)")
	fs.IntVar(&f.maxOffers, "max-outstanding-offers", 0, "cap on unanswered offers per framework (0: none)")
	fs.StringVar(&f.weights, "weights", "", "role weights, e.g. analytics=2,batch=1")
	fs.DurationVar(&f.pingInterval, "agent-ping-interval", 15*time.Second, "interval between agent pings")
	fs.IntVar(&f.maxMissedPings, "agent-max-missed-pings", 5, "missed pings before an agent is removed")
	fs.StringVar(&f.credentials, "credentials", "", "file of framework credentials (Mesos JSON or 'principal secret' lines); enables authentication")
	fs.StringVar(&f.agentSecretFile, "agent-secret-file", "", "file holding the secret remote agents must present")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level")
	fs.StringVar(&f.logFormat, "log-format", "auto", "log format: auto, text or json")
}

func (f *masterFlags) logger() (*logrus.Logger, error) {
	return logging.New(logging.Options{Level: f.logLevel, Format: f.logFormat, Out: os.Stderr})
}

func (f *masterFlags) config(log logrus.FieldLogger) (master.Config, string, error) {
	mc := master.Config{ID: f.id, Hostname: f.hostname, HeartbeatInterval: f.heartbeat, AllocationInterval: f.allocation,
		AllocateOnRelease: f.allocateOnRelease, OfferTimeout: f.offerTimeout, MaxOutstandingOffers: f.maxOffers,
		AgentPingInterval: f.pingInterval, AgentMaxMissedPings: f.maxMissedPings, Logger: log}
	w, err := parseWeights(f.weights)
	if err != nil {
		return mc, "", err
	}
	mc.Weights = w
	if f.credentials != "" {
		if mc.Credentials, err = master.LoadCredentials(f.credentials); err != nil {
			return mc, "", err
		}
	}
	secret, err := readSecretFile(f.agentSecretFile)
	return mc, secret, err
}

func parseWeights(s string) (map[string]float64, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]float64{}
	for _, kv := range strings.Split(s, ",") {
		role, w, ok := strings.Cut(strings.TrimSpace(kv), "=")
		v, err := strconv.ParseFloat(w, 64)
		if !ok || role == "" || err != nil || v <= 0 {
			return nil, fmt.Errorf("--weights: %q is not role=positive-number", kv)
		}
		out[role] = v
	}
	return out, nil
}

func readSecretFile(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("secret file: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("secret file %s is empty", path)
	}
	return s, nil
}

func mesosMasterCommand() *cobra.Command {
	var f masterFlags
	cmd := &cobra.Command{
		Use:   "master",
		Short: "Run a minimesos master (agents join with `flint mesos agent`)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCluster(cmd.Context(), &f, 0, agentFlags{})
		},
	}
	f.register(cmd.Flags())
	return cmd
}

func mesosLocalCommand() *cobra.Command {
	var f masterFlags
	var a agentFlags
	var agents int
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Run a minimesos master with in-process agents",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if agents < 0 {
				return fmt.Errorf("--agents must not be negative")
			}
			return runCluster(cmd.Context(), &f, agents, a)
		},
	}
	f.register(cmd.Flags())
	a.register(cmd.Flags(), false)
	cmd.Flags().IntVar(&agents, "agents", 1, "number of in-process agents")
	return cmd
}

// runCluster runs a master with n in-process agents until SIGINT/SIGTERM.
func runCluster(ctx context.Context, f *masterFlags, n int, a agentFlags) error {
	log, err := f.logger()
	if err != nil {
		return err
	}
	mc, secret, err := f.config(log)
	if err != nil {
		return err
	}
	ac, err := a.config(log)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := cluster.Start(ctx, cluster.Config{Listen: f.listen, Master: mc, AgentSecret: secret, Agents: n, Agent: ac,
		FetchCacheBytes: a.cacheBytes, Logger: log})
	if err != nil {
		return err
	}
	log.Infof("minimesos master %s listening on %s with %d in-process agents", c.Master.ID(), c.URL(), n)
	<-ctx.Done()
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.Close(sctx)
}

// agentFlags are the flags of agents (`mesos agent`, and the in-process agents of `mesos local`).
type agentFlags struct {
	resources, attributes, workDir, hostname string
	cacheBytes                               int64
}

func (a *agentFlags) register(fs *pflag.FlagSet, remote bool) {
	fs.StringVar(&a.resources, "resources", "", "agent resources, Mesos syntax: cpus:4;mem:4096;disk:10240;ports:[31000-32000] (default: detected)")
	fs.StringVar(&a.attributes, "attributes", "", "agent attributes, Mesos syntax: rack:r1;zone:z2")
	fs.StringVar(&a.workDir, "work-dir", "", "agent work directory (default: a directory under the system temp dir)")
	fs.Int64Var(&a.cacheBytes, "fetcher-cache-bytes", 2<<30, "size of the fetcher cache (0: no cache)")
	if remote {
		fs.StringVar(&a.hostname, "hostname", "", "hostname advertised to the master (default: os.Hostname)")
	}
}

func (a *agentFlags) config(log logrus.FieldLogger) (agent.Config, error) {
	wd := a.workDir
	if wd == "" {
		wd = filepath.Join(os.TempDir(), "flint-mesos-"+strconv.Itoa(os.Getuid()))
	}
	if err := os.MkdirAll(wd, 0o755); err != nil {
		return agent.Config{}, fmt.Errorf("--work-dir: %w", err)
	}
	return agent.Config{WorkDir: wd, Hostname: a.hostname, Resources: a.resources, Attributes: a.attributes, Logger: log}, nil
}

func mesosAgentCommand() *cobra.Command {
	var a agentFlags
	var masterAddr, listen, advertise, secretFile, logLevel, logFormat string
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run a minimesos agent that registers with a master",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log, err := logging.New(logging.Options{Level: logLevel, Format: logFormat, Out: os.Stderr})
			if err != nil {
				return err
			}
			secret, err := readSecretFile(secretFile)
			if err != nil {
				return err
			}
			return runAgent(cmd.Context(), log, a, masterAddr, listen, advertise, secret)
		},
	}
	fs := cmd.Flags()
	a.register(fs, true)
	fs.StringVar(&masterAddr, "master", "", "master address, host:port (required)")
	fs.StringVar(&listen, "listen", "0.0.0.0:5051", "address of the agent's HTTP server (executor API, /files)")
	fs.StringVar(&advertise, "advertise", "", "host:port executors and the master use to reach this agent (default: --hostname with the listen port)")
	fs.StringVar(&secretFile, "agent-secret-file", "", "file holding the secret the master requires")
	fs.StringVar(&logLevel, "log-level", "info", "log level")
	fs.StringVar(&logFormat, "log-format", "auto", "log format: auto, text or json")
	_ = cmd.MarkFlagRequired("master")
	return cmd
}

func runAgent(ctx context.Context, log *logrus.Logger, a agentFlags, masterAddr, listen, advertise, secret string) error {
	ac, err := a.config(log)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("agent listen: %w", err)
	}
	defer lis.Close()
	ac.Endpoint = advertiseAddr(advertise, ac.Hostname, lis.Addr())
	if ac.Fetch, err = cluster.NewFetch(filepath.Join(ac.WorkDir, "fetch-cache"), a.cacheBytes); err != nil {
		return err
	}
	ag, err := agent.New(ac)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: ag.Handler(), ReadHeaderTimeout: 30 * time.Second}
	go srv.Serve(lis) //nolint:errcheck // ends with Shutdown below
	base := masterAddr
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	client := link.Dial(base, link.ClientConfig{Secret: secret, Logger: log})
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := ag.Start(ctx, client); err != nil {
		ag.Close()
		client.Close()
		return err
	}
	log.Infof("minimesos agent %s serving on %s, registered with %s", ag.ID(), ac.Endpoint, base)
	<-ctx.Done()
	err = ag.Close()
	client.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return err
}

func advertiseAddr(advertise, hostname string, addr net.Addr) string {
	if advertise != "" {
		return advertise
	}
	_, port, _ := net.SplitHostPort(addr.String())
	host, _, _ := net.SplitHostPort(addr.String())
	if hostname != "" {
		host = hostname
	} else if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil {
			host = h
		}
	}
	return net.JoinHostPort(host, port)
}
