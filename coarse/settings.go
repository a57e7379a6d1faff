package coarse

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/mesosbackend"
)

// settings are the flint.* keys the coarse backend reads, validated once:
// the ones both Mesos backends read (mesosbackend.Settings) and coarse's.
type settings struct {
	mesosbackend.Settings
	coresMax         int // flint.cores.max; math.MaxInt when unset
	executorCores    int // flint.executor.cores; 0 = the whole offer
	taskCPUs         int // flint.task.cpus
	gpusMax          int // flint.mesos.gpus.max
	shutdownTimeout  time.Duration
	maxAgentFailures int
	agentExclusion   time.Duration
	heartbeat        time.Duration
	localityWait     time.Duration // flint.locality.wait: how long to hold out for preferred hosts
}

func readSettings(cfg *config.Config) (settings, error) {
	common, commonErrs := mesosbackend.ReadSettings(cfg, "coarse")
	s := settings{
		Settings:         common,
		coresMax:         cfg.Int("flint.cores.max"),
		executorCores:    cfg.Int("flint.executor.cores"),
		taskCPUs:         max(cfg.Int("flint.task.cpus"), 1),
		gpusMax:          cfg.Int("flint.mesos.gpus.max"),
		shutdownTimeout:  cfg.Duration("flint.mesos.coarse.shutdownTimeout"),
		maxAgentFailures: maxAgentFailures(cfg),
		agentExclusion:   cfg.Duration("flint.mesos.executor.agentExclusionTimeout"),
		heartbeat:        cfg.Duration("flint.executor.heartbeatInterval"),
		localityWait:     cfg.Duration("flint.locality.wait"),
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
	if s.heartbeat >= s.NetworkTimeout {
		errs = append(errs, fmt.Errorf("coarse: flint.executor.heartbeatInterval (%s) must be shorter than flint.network.timeout (%s)", s.heartbeat, s.NetworkTimeout))
	}
	for _, err := range commonErrs {
		errs = append(errs, fmt.Errorf("coarse: %w", err))
	}
	return s, errors.Join(errs...)
}

// maxAgentFailures is flint.mesos.executor.maxFailuresPerAgent, except under
// the embedded master: its agents all run on this one host, so excluding
// an agent after executor failures only stalls the job (until
// flint.mesos.noOfferFitTimeout) instead of avoiding a bad machine;
// the tasks' own failure count ends it with the executors' stderr.
func maxAgentFailures(cfg *config.Config) int {
	if cfg.String("flint.master") == "embedded" {
		return math.MaxInt32
	}
	return cfg.Int("flint.mesos.executor.maxFailuresPerAgent")
}
