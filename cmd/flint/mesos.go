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

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/deploy/embedded"
	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/agent/containerizer"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/logging"
	"github.com/flint-mesos/flint/framework/mesosconn/detector"
	"github.com/flint-mesos/flint/internal/plural"
)

func mesosCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mesos",
		Short: "Run minimesos, Flint's lightweight Mesos-compatible master and agents",
	}
	cmd.AddCommand(mesosMasterCommand(), mesosLocalCommand(), mesosAgentCommand(), mesosLogsCommand(), mesosGCCommand())
	return cmd
}

// masterFlags are the flags shared by `mesos master` and `mesos local`.
type masterFlags struct {
	listen, id, hostname, credentials, acls, weights, agentSecretFile, logLevel, logFormat string
	zk                                                                                     string
	heartbeat, allocation, offerTimeout, pingInterval, zkSessionTimeout                    time.Duration
	allocateOnRelease                                                                      bool
	maxOffers, maxMissedPings                                                              int
}

// Allocation defaults. `mesos master` stands in for an Apache Mesos master
// and allocates as one does (a batch every second, freed resources only
// then), so what runs on it predicts a cluster. `mesos local` is a laptop's
// whole cluster: it allocates as the embedded master does (freed resources
// at once, a batch every 50ms), or fine mode would run one task per free
// slot per second (14× slower than coarse in issue 23's measurement).
const (
	mesosAllocationInterval  = time.Second
	laptopAllocationInterval = 50 * time.Millisecond
)

// register adds the master's flags; laptop picks `mesos local`'s
// allocation defaults.
func (f *masterFlags) register(fs *pflag.FlagSet, laptop bool) {
	fs.StringVar(&f.listen, "listen", "127.0.0.1:5050", "address the master listens on")
	fs.StringVar(&f.id, "id", "", "master id (default: a fresh UUID)")
	fs.StringVar(&f.hostname, "hostname", "", "hostname advertised in MasterInfo (default: the listen address when it is a specific one, else os.Hostname)")
	fs.DurationVar(&f.heartbeat, "heartbeat-interval", 15*time.Second, "interval between HEARTBEAT events")
	if laptop {
		fs.DurationVar(&f.allocation, "allocation-interval", laptopAllocationInterval, "interval between batch allocations (Apache Mesos: 1s, as flint mesos master keeps it)")
		fs.BoolVar(&f.allocateOnRelease, "allocate-on-release", true, "also offer resources as soon as they are freed; --allocate-on-release=false --allocation-interval=1s allocates as Apache Mesos does")
	} else {
		fs.DurationVar(&f.allocation, "allocation-interval", mesosAllocationInterval, "interval between batch allocations (1s, as Apache Mesos' --allocation_interval)")
		fs.BoolVar(&f.allocateOnRelease, "allocate-on-release", false, "also offer resources as soon as they are freed (low latency; Apache Mesos does not)")
	}
	fs.DurationVar(&f.offerTimeout, "offer-timeout", 0, "rescind offers not answered within this time (0: never)")
	fs.IntVar(&f.maxOffers, "max-outstanding-offers", 0, "cap on unanswered offers per framework (0: none)")
	fs.StringVar(&f.weights, "weights", "", "role weights, e.g. analytics=2,batch=1")
	fs.DurationVar(&f.pingInterval, "agent-ping-interval", 15*time.Second, "interval between agent pings")
	fs.IntVar(&f.maxMissedPings, "agent-max-missed-pings", 5, "missed pings before an agent is removed")
	fs.StringVar(&f.credentials, "credentials", "", "file of framework credentials (Mesos JSON or 'principal secret' lines); enables authentication")
	fs.StringVar(&f.acls, "acls", "", "file of Mesos ACLs (JSON); minimesos enforces run_tasks (which principal may run tasks as which user) and permissive")
	fs.StringVar(&f.agentSecretFile, "agent-secret-file", "", "file holding the secret remote agents must present")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level")
	fs.StringVar(&f.logFormat, "log-format", "auto", "log format: auto, text or json")
	fs.StringVar(&f.zk, "zk", "", "zk://host:port[,host:port…]/path: take part in Mesos' leader election in ZooKeeper, as Mesos' --zk (frameworks then use mesos://zk://…)")
	fs.DurationVar(&f.zkSessionTimeout, "zk-session-timeout", 10*time.Second, "ZooKeeper session timeout (Mesos' --zk_session_timeout)")
}

// zooKeeper parses --zk: nil when unset.
func (f *masterFlags) zooKeeper() (*cluster.ZooKeeper, error) {
	if f.zk == "" {
		return nil, nil
	}
	rest, ok := strings.CutPrefix(f.zk, "zk://")
	servers, path, _ := strings.Cut(rest, "/")
	if !ok || servers == "" || path == "" || strings.Contains(servers, "@") {
		return nil, flint.Usage(fmt.Errorf("--zk %q: want zk://host:port[,host:port…]/path, e.g. zk://127.0.0.1:2181/mesos", f.zk), "flint mesos local --help")
	}
	if f.zkSessionTimeout <= 0 {
		return nil, flint.Usage(fmt.Errorf("--zk-session-timeout %s: must be positive", f.zkSessionTimeout), "flint mesos local --help")
	}
	return &cluster.ZooKeeper{Servers: strings.Split(servers, ","), Path: "/" + strings.TrimSuffix(path, "/"), SessionTimeout: f.zkSessionTimeout}, nil
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
	if f.acls != "" {
		if mc.ACLs, err = master.LoadACLs(f.acls); err != nil {
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
	f.register(cmd.Flags(), false)
	return cmd
}

func mesosLocalCommand() *cobra.Command {
	var f masterFlags
	var a agentFlags
	var agents int
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Run a minimesos master with in-process agents",
		Long: "Run a minimesos master with in-process agents. Without --work-dir each instance gets its own\n" +
			"work directory under the system temp dir (removed when it stops; `flint mesos gc` removes those\n" +
			"of instances that were killed), so two instances never share agent ids or sandboxes.\n\n" +
			"Allocation: this laptop cluster offers freed resources at once and allocates every 50ms, as the\n" +
			"embedded master does. Apache Mesos (and `flint mesos master`) offers freed resources only at its\n" +
			"next batch, every 1s: fine mode (flint.mesos.coarse=false), where every task is a Mesos task, then\n" +
			"runs about one task per free slot per second — 14x slower than coarse mode on a small job. To see\n" +
			"what a real cluster will do, run with --allocate-on-release=false --allocation-interval=1s; on a\n" +
			"Mesos cluster, use coarse mode (the default) or lower the master's --allocation_interval.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if agents < 0 {
				return flint.Usage(fmt.Errorf("--agents must not be negative"), "flint mesos local --help")
			}
			if a.workDir == "" {
				if _, err := embedded.GC(os.TempDir(), false); err != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "flint:", err)
				}
				dir, err := embedded.ClaimWorkDir(os.TempDir(), embedded.LocalPrefix)
				if err != nil {
					return fmt.Errorf("mesos local: work directory: %w", err)
				}
				defer os.RemoveAll(dir)
				a.workDir = dir
			}
			return runCluster(cmd.Context(), &f, agents, a)
		},
	}
	f.register(cmd.Flags(), true)
	a.register(cmd.Flags(), false, 15*time.Minute)
	cmd.Flags().IntVar(&agents, "agents", config.New().Int("flint.embedded.agents"), "number of in-process agents (the embedded master's flint.embedded.agents default)")
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
	zk, err := f.zooKeeper()
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
		FetchCacheBytes: a.cacheBytes, ZooKeeper: zk, Logger: log})
	if err != nil {
		return err
	}
	elected := ""
	if zk != nil {
		elected = fmt.Sprintf(", contending for leadership in ZooKeeper at %s (frameworks: --master mesos://%s)", f.zk, f.zk)
	}
	log.Infof("minimesos master %s listening on %s with %s%s", c.Master.ID(), c.URL(), plural.N(n, "in-process agent"), elected)
	<-ctx.Done()
	log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return c.Close(sctx)
}

// agentFlags are the flags of agents (`mesos agent`, and the in-process agents of `mesos local`).
type agentFlags struct {
	resources, attributes, workDir, hostname string
	secretsDir                               string
	containerizers                           []string
	cacheBytes                               int64
	gcDelay                                  time.Duration
}

func (a *agentFlags) register(fs *pflag.FlagSet, remote bool, gcDelay time.Duration) {
	fs.DurationVar(&a.gcDelay, "gc-delay", gcDelay, "remove an ended executor's sandbox this long after it ended (Mesos' --gc_delay)")
	fs.StringVar(&a.resources, "resources", "", "agent resources, Mesos syntax: cpus:4;mem:4096;disk:10240;ports:[31000-32000] (default: detected)")
	fs.StringVar(&a.attributes, "attributes", "", "agent attributes, Mesos syntax: rack:r1;zone:z2")
	fs.StringVar(&a.workDir, "work-dir", "", "agent work directory (default: a directory under the system temp dir)")
	fs.Int64Var(&a.cacheBytes, "fetcher-cache-bytes", 2<<30, "size of the fetcher cache (0: no cache)")
	fs.StringVar(&a.secretsDir, "secrets-dir", "", "resolve reference secrets from this directory (secret /a/b is the file a/b; with a key, that key of its JSON object), in the role of Mesos' --secret_resolver module (default: value secrets only, as Mesos' default resolver)")
	fs.StringSliceVar(&a.containerizers, "containerizers", []string{"mesos"}, "containerizers, as Mesos' --containerizers: mesos (processes), docker (DOCKER containers through the Docker Engine API at DOCKER_HOST or /var/run/docker.sock; images must be on the daemon, nothing is pulled)")
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
	ac := agent.Config{WorkDir: wd, Hostname: a.hostname, Resources: a.resources, Attributes: a.attributes, GCDelay: a.gcDelay, Logger: log, Containerizers: a.containerizers}
	if a.secretsDir != "" {
		dir, err := filepath.Abs(a.secretsDir)
		if err == nil {
			_, err = os.ReadDir(dir)
		}
		if err != nil {
			return agent.Config{}, fmt.Errorf("--secrets-dir: %w", err)
		}
		ac.SecretResolver = containerizer.DirSecretResolver{Dir: dir}
	}
	return ac, nil
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
	a.register(fs, true, 7*24*time.Hour)
	fs.StringVar(&masterAddr, "master", "", "master address, host:port, or zk://host:port[,host:port…]/path to follow the leading master elected in ZooKeeper, as Mesos' agent --master (required)")
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
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	base, leaders, err := agentMaster(ctx, masterAddr, log)
	if err != nil {
		return err
	}
	client := link.Dial(base, link.ClientConfig{Secret: secret, Logger: log})
	if leaders != nil {
		go followLeaders(leaders, client, ag, log)
	}
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

func mesosGCCommand() *cobra.Command {
	var keepFailed bool
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Remove the sandboxes of embedded masters whose driver is gone (kept after failures, or left by a killed driver)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			removed, err := embedded.GC(os.TempDir(), !keepFailed)
			for _, d := range removed {
				fmt.Fprintln(cmd.OutOrStdout(), "removed", d)
			}
			if len(removed) == 0 && err == nil {
				fmt.Fprintln(cmd.OutOrStdout(), "nothing to remove")
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&keepFailed, "keep-failed", false, "keep the sandboxes kept after a failure (remove only those of killed drivers)")
	return cmd
}

// agentMaster resolves an agent's --master: host:port (or http://host:port)
// is used as is; zk://hosts/path (or mesos://zk://…) waits for the leading
// master elected in ZooKeeper and returns the channel of later leaders, as
// a Mesos agent's master detector does.
func agentMaster(ctx context.Context, master string, log *logrus.Logger) (string, <-chan detector.Leader, error) {
	if !strings.HasPrefix(strings.TrimPrefix(master, "mesos://"), "zk://") {
		if !strings.Contains(master, "://") {
			master = "http://" + master
		}
		return master, nil, nil
	}
	u, err := detector.ParseMaster(master)
	if err != nil {
		return "", nil, flint.Usage(fmt.Errorf("--master: %w", err), "flint mesos agent --help")
	}
	leaders := detector.New(u, log).Watch(ctx)
	log.Infof("agent: waiting for the leading master in ZooKeeper at %s", u.Raw)
	for l := range leaders { // closed when ctx ends
		if !l.IsZero() {
			return "http://" + l.Addr, leaders, nil
		}
	}
	return "", nil, fmt.Errorf("agent: no leading master in ZooKeeper at %s: %w", u.Raw, context.Cause(ctx))
}

// followLeaders points the agent at each newly elected master and makes it
// re-register there at once (Mesos' agent on a detector change), instead of
// after the old master's ping timeout.
func followLeaders(leaders <-chan detector.Leader, client *link.Client, ag *agent.Agent, log *logrus.Logger) {
	for l := range leaders {
		if l.IsZero() {
			continue
		}
		log.Infof("agent: leading master is %s; re-registering", l.Addr)
		client.SetBase("http://" + l.Addr)
		ag.MasterDetected()
	}
}
