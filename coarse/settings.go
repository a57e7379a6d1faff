package coarse

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesosconn/constraints"
	"github.com/flint-mesos/flint/mesosbackend"
)

// settings are the flint.* keys the coarse backend reads, validated once.
type settings struct {
	keepFramework     bool                  // Stop leaves the framework for a successor (mesosbackend.KeepFramework)
	launch            mesosbackend.Executor // what every executor launch carries: secrets (SecretEnv, Secrets) and ProxyUser
	coresMax          int                   // flint.cores.max; math.MaxInt when unset
	executorCores     int                   // flint.executor.cores; 0 = the whole offer
	taskCPUs          int                   // flint.task.cpus
	memMB             float64               // flint.executor.memory + overhead, in MiB
	gpusMax           int                   // flint.mesos.gpus.max
	constraints       constraints.Constraints
	executorURI       string // flint.executor.uri; "" = serve our own executable
	executorSHA       string // flint.executor.sha256
	command           string // flint.mesos.executor.command
	extraURIs         []string
	env               map[string]string // flint.executorEnv.*
	shutdownTimeout   time.Duration
	noExecutorTimeout time.Duration
	maxAgentFailures  int
	agentExclusion    time.Duration
	networkTimeout    time.Duration
	tls               bool // flint.network.tls.enabled
	heartbeat         time.Duration
	localityWait      time.Duration // flint.locality.wait: how long to hold out for preferred hosts
	maxResultSize     int64
	maxDirectResult   int64
	addr              mesosbackend.Addr // flint.driver.host, bindAddress, ports
	logLevel          string
	logFormat         string
}

func readSettings(cfg *config.Config) (settings, error) {
	s := settings{
		coresMax:          cfg.Int("flint.cores.max"),
		executorCores:     cfg.Int("flint.executor.cores"),
		taskCPUs:          max(cfg.Int("flint.task.cpus"), 1),
		gpusMax:           cfg.Int("flint.mesos.gpus.max"),
		shutdownTimeout:   cfg.Duration("flint.mesos.coarse.shutdownTimeout"),
		noExecutorTimeout: cfg.Duration("flint.mesos.coarse.noExecutorTimeout"),
		maxAgentFailures:  maxAgentFailures(cfg),
		agentExclusion:    cfg.Duration("flint.mesos.executor.agentExclusionTimeout"),
		networkTimeout:    cfg.Duration("flint.network.timeout"),
		tls:               cfg.Bool("flint.network.tls.enabled"),
		heartbeat:         cfg.Duration("flint.executor.heartbeatInterval"),
		localityWait:      cfg.Duration("flint.locality.wait"),
		maxResultSize:     cfg.Size("flint.driver.maxResultSize"),
		maxDirectResult:   cfg.Size("flint.task.maxDirectResultSize"),
		logLevel:          cfg.String("flint.log.level"),
		logFormat:         cfg.String("flint.log.format"),
	}
	var errs []error
	if !cfg.IsSet("flint.cores.max") {
		s.coresMax = math.MaxInt
	}
	switch {
	case s.coresMax < 1:
		errs = append(errs, fmt.Errorf("coarse: flint.cores.max=%d must be positive", s.coresMax))
	case s.executorCores < 0:
		errs = append(errs, fmt.Errorf("coarse: flint.executor.cores=%d must be positive", s.executorCores))
	case s.executorCores > 0 && s.executorCores < s.taskCPUs:
		errs = append(errs, fmt.Errorf("coarse: flint.executor.cores=%d is below flint.task.cpus=%d: no executor could run a task", s.executorCores, s.taskCPUs))
	case s.executorCores > s.coresMax:
		errs = append(errs, fmt.Errorf("coarse: flint.executor.cores=%d exceeds flint.cores.max=%d: no executor could ever start", s.executorCores, s.coresMax))
	}
	if s.gpusMax < 0 {
		errs = append(errs, fmt.Errorf("coarse: flint.mesos.gpus.max=%d must not be negative", s.gpusMax))
	}
	if s.maxAgentFailures < 1 {
		errs = append(errs, fmt.Errorf("coarse: flint.mesos.executor.maxFailuresPerAgent=%d must be positive", s.maxAgentFailures))
	}
	if s.heartbeat >= s.networkTimeout {
		errs = append(errs, fmt.Errorf("coarse: flint.executor.heartbeatInterval (%s) must be shorter than flint.network.timeout (%s)", s.heartbeat, s.networkTimeout))
	}
	addr, addrErrs := mesosbackend.ReadAddr(cfg)
	s.addr = addr
	for _, err := range addrErrs {
		errs = append(errs, fmt.Errorf("coarse: %w", err))
	}
	ex, exErrs := mesosbackend.ReadExecutor(cfg)
	s.executorURI, s.executorSHA, s.command, s.extraURIs, s.env = ex.URI, ex.SHA256, ex.Command, ex.ExtraURIs, ex.Env
	s.keepFramework = mesosbackend.KeepFramework(cfg)
	s.launch = mesosbackend.Executor{SecretEnv: ex.SecretEnv, Secrets: ex.Secrets, ProxyUser: ex.ProxyUser}
	s.constraints, s.memMB = ex.Constraints, ex.MemMB
	for _, err := range exErrs {
		errs = append(errs, fmt.Errorf("coarse: %w", err))
	}
	return s, errors.Join(errs...)
}

// maxAgentFailures is flint.mesos.executor.maxFailuresPerAgent, except under
// the embedded master: its agents all run on this one host, so excluding
// an agent after executor failures only stalls the job (until
// flint.mesos.coarse.noExecutorTimeout) instead of avoiding a bad machine;
// the tasks' own failure count ends it with the executors' stderr.
func maxAgentFailures(cfg *config.Config) int {
	if cfg.String("flint.master") == "embedded" {
		return math.MaxInt32
	}
	return cfg.Int("flint.mesos.executor.maxFailuresPerAgent")
}
