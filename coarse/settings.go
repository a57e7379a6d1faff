package coarse

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/mesosconn/constraints"
	"github.com/flint-mesos/flint/framework/mesosconn/driverside"
)

// settings are the flint.* keys the coarse backend reads, validated once.
type settings struct {
	coresMax          int     // flint.cores.max; math.MaxInt when unset
	executorCores     int     // flint.executor.cores; 0 = the whole offer
	taskCPUs          int     // flint.task.cpus
	memMB             float64 // flint.executor.memory + overhead, in MiB
	gpusMax           int     // flint.mesos.gpus.max
	constraints       constraints.Constraints
	executorURI       string // flint.executor.uri; "" = serve our own executable
	command           string // flint.mesos.executor.command
	extraURIs         []string
	env               map[string]string // flint.executorEnv.*
	shutdownTimeout   time.Duration
	noExecutorTimeout time.Duration
	maxAgentFailures  int
	agentExclusion    time.Duration
	networkTimeout    time.Duration
	heartbeat         time.Duration
	maxResultSize     int64
	maxDirectResult   int64
	driverHost        string
	logLevel          string
	logFormat         string
}

// minOverheadMB is Spark's MEMORY_OVERHEAD_MINIMUM; the default overhead is
// max(384 MiB, 10% of flint.executor.memory).
const minOverheadMB = 384

func readSettings(cfg *framework.Config) (settings, error) {
	s := settings{
		coresMax:          cfg.Int("flint.cores.max"),
		executorCores:     cfg.Int("flint.executor.cores"),
		taskCPUs:          max(cfg.Int("flint.task.cpus"), 1),
		gpusMax:           cfg.Int("flint.mesos.gpus.max"),
		executorURI:       strings.TrimSpace(cfg.String("flint.executor.uri")),
		command:           strings.TrimSpace(cfg.String("flint.mesos.executor.command")),
		env:               cfg.Prefixed("flint.executorEnv."),
		shutdownTimeout:   cfg.Duration("flint.mesos.coarse.shutdownTimeout"),
		noExecutorTimeout: cfg.Duration("flint.mesos.coarse.noExecutorTimeout"),
		maxAgentFailures:  cfg.Int("flint.mesos.executor.maxFailuresPerAgent"),
		agentExclusion:    cfg.Duration("flint.mesos.executor.agentExclusionTimeout"),
		networkTimeout:    cfg.Duration("flint.network.timeout"),
		heartbeat:         cfg.Duration("flint.executor.heartbeatInterval"),
		maxResultSize:     cfg.Size("flint.driver.maxResultSize"),
		maxDirectResult:   cfg.Size("flint.task.maxDirectResultSize"),
		driverHost:        strings.TrimSpace(cfg.String("flint.driver.host")),
		logLevel:          cfg.String("flint.log.level"),
		logFormat:         cfg.String("flint.log.format"),
	}
	var errs []error
	if !cfg.IsSet("flint.cores.max") {
		s.coresMax = math.MaxInt
	}
	mem := float64(cfg.Size("flint.executor.memory")) / (1 << 20)
	overhead := math.Max(minOverheadMB, 0.10*mem)
	if cfg.IsSet("flint.mesos.executor.memoryOverhead") {
		overhead = float64(cfg.Size("flint.mesos.executor.memoryOverhead")) / (1 << 20)
	}
	s.memMB = math.Ceil(mem + overhead)
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
	c, err := constraints.Parse(cfg.String("flint.mesos.constraints"))
	if err != nil {
		errs = append(errs, fmt.Errorf("coarse: flint.mesos.constraints: %w", err))
	}
	s.constraints = c
	for u := range strings.SplitSeq(cfg.String("flint.mesos.uris"), ",") {
		if u = strings.TrimSpace(u); u != "" {
			s.extraURIs = append(s.extraURIs, u)
		}
	}
	if s.command == "" && s.executorURI != "" {
		if driverside.IsArchive(s.executorURI) {
			errs = append(errs, fmt.Errorf("coarse: flint.executor.uri %q is an archive: set flint.mesos.executor.command to the executable inside it", driverside.RedactURI(s.executorURI)))
		}
		s.command = "./" + driverside.URIBase(s.executorURI)
	}
	return s, errors.Join(errs...)
}
