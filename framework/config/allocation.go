package config

import (
	"fmt"
	"math"

	"github.com/flint-mesos/flint/framework/allocation"
)

// DynamicAllocation reads flint.dynamicAllocation.* into the decision
// core's settings (with the executors' tasks at once from
// flint.executor.cores / flint.task.cpus, as Spark's tasks per executor,
// and whether flint.shuffle.service.enabled serves released executors'
// outputs). enabled reports flint.dynamicAllocation.enabled; err, only
// when enabled, is the first setting that cannot work, naming its key.
func (c *Config) DynamicAllocation() (cfg allocation.Config, enabled bool, err error) {
	cfg = allocation.DefaultConfig()
	cfg.MinExecutors = c.Int("flint.dynamicAllocation.minExecutors")
	if c.IsSet("flint.dynamicAllocation.maxExecutors") {
		cfg.MaxExecutors = c.Int("flint.dynamicAllocation.maxExecutors")
	}
	cfg.InitialExecutors = cfg.MinExecutors
	if c.IsSet("flint.dynamicAllocation.initialExecutors") {
		cfg.InitialExecutors = c.Int("flint.dynamicAllocation.initialExecutors")
	}
	cfg.ExecutorIdleTimeout = c.Duration("flint.dynamicAllocation.executorIdleTimeout")
	if c.IsSet("flint.dynamicAllocation.cachedExecutorIdleTimeout") {
		cfg.CachedExecutorIdleTimeout = c.Duration("flint.dynamicAllocation.cachedExecutorIdleTimeout")
	}
	cfg.SchedulerBacklogTimeout = c.Duration("flint.dynamicAllocation.schedulerBacklogTimeout")
	cfg.SustainedSchedulerBacklogTimeout = c.Duration("flint.dynamicAllocation.sustainedSchedulerBacklogTimeout")
	cfg.TasksPerExecutor = 1
	if cores := c.Int("flint.executor.cores"); cores > 0 {
		cfg.TasksPerExecutor = cores / max(c.Int("flint.task.cpus"), 1)
	}
	cfg.ShuffleService = c.Bool("flint.shuffle.service.enabled")
	if cfg.MaxExecutors > math.MaxInt32 {
		cfg.MaxExecutors = math.MaxInt32
	}
	if !c.Bool("flint.dynamicAllocation.enabled") {
		return cfg, false, nil
	}
	if err := cfg.Validate(); err != nil {
		return cfg, true, fmt.Errorf("config: %w: %w", ErrInvalidValue, err)
	}
	return cfg, true, nil
}
