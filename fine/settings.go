package fine

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/mesosbackend"
)

// settings are the flint.* keys the fine backend reads, validated once:
// the ones both Mesos backends read (mesosbackend.Settings) and fine's.
type settings struct {
	mesosbackend.Settings
	taskCPUs    int     // flint.task.cpus
	execCPUs    float64 // flint.mesos.mesosExecutor.cores
	idleTimeout time.Duration
	holdTime    time.Duration
	coresMax    float64 // flint.cores.max; +Inf when unset
	// serviceEvery is how often the driver heartbeats the agents' shuffle
	// services (flint.executor.heartbeatInterval, as coarse).
	serviceEvery time.Duration
}

func readSettings(cfg *config.Config) (settings, error) {
	common, commonErrs := mesosbackend.ReadSettings(cfg, "fine")
	s := settings{
		Settings:    common,
		taskCPUs:    cfg.Int("flint.task.cpus"),
		execCPUs:    cfg.Float64("flint.mesos.mesosExecutor.cores"),
		idleTimeout: cfg.Duration("flint.mesos.fine.executorIdleTimeout"),
		holdTime:    cfg.Duration("flint.mesos.fine.offerHoldTime"),
		coresMax:    math.Inf(1),

		serviceEvery: cfg.Duration("flint.executor.heartbeatInterval"),
	}
	var errs []error
	for _, err := range commonErrs {
		errs = append(errs, fmt.Errorf("fine: %w", err))
	}
	// An UPDATE event must stay well below mesos-go's 4 MiB record limit.
	s.MaxDirectResult = min(max(s.MaxDirectResult, 0), contract.MaxInlineResult)
	if s.taskCPUs < 1 {
		errs = append(errs, fmt.Errorf("fine: flint.task.cpus=%d must be positive", s.taskCPUs))
	}
	if s.execCPUs < 0 {
		errs = append(errs, fmt.Errorf("fine: flint.mesos.mesosExecutor.cores=%g must not be negative", s.execCPUs))
	}
	if s.idleTimeout < 0 || s.holdTime < 0 {
		errs = append(errs, errors.New("fine: flint.mesos.fine.executorIdleTimeout and flint.mesos.fine.offerHoldTime must not be negative"))
	}
	if cfg.IsSet("flint.cores.max") {
		n := cfg.Int("flint.cores.max")
		s.coresMax = float64(n)
		switch {
		case n < 1:
			errs = append(errs, fmt.Errorf("fine: flint.cores.max=%d must be positive", n))
		case s.coresMax+1e-9 < float64(s.taskCPUs)+s.execCPUs:
			errs = append(errs, fmt.Errorf("fine: flint.cores.max=%d is below flint.task.cpus=%d + flint.mesos.mesosExecutor.cores=%g: no task could ever run", n, s.taskCPUs, s.execCPUs))
		}
	}
	return s, errors.Join(errs...)
}
