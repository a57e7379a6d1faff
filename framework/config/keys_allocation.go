package config

import "time"

const allocUsed = " Read by the driver in coarse-grained Mesos mode (a Mesos master or `embedded` with `flint.mesos.coarse`) while `flint.dynamicAllocation.enabled` is set."

// allocationKeys are dynamic allocation's settings (framework/allocation),
// Spark's spark.dynamicAllocation.* with their meanings and defaults.
var allocationKeys = []Key{
	{Name: "flint.dynamicAllocation.enabled", Kind: KindBool, Default: "false", Group: GroupAllocation,
		Doc: "Grow and shrink the application's executors with its work (Spark's `spark.dynamicAllocation.enabled`): executors are launched from offers while tasks wait and idle ones are given back to Mesos. Coarse-grained mode only — fine-grained mode is elastic by nature (each task is its own Mesos task). Releasing executors that hold shuffle outputs needs `flint.shuffle.service.enabled`; without it such executors are kept (Spark's shuffle tracking)."},
	{Name: "flint.dynamicAllocation.minExecutors", Kind: KindInt, Default: "0", Group: GroupAllocation,
		Doc: "Never fewer executors than this (Spark's `spark.dynamicAllocation.minExecutors`)." + allocUsed},
	{Name: "flint.dynamicAllocation.maxExecutors", Kind: KindInt, Group: GroupAllocation,
		Doc: "Never more executors than this (Spark's `spark.dynamicAllocation.maxExecutors`). Unset: no bound beyond `flint.cores.max` and the cluster." + allocUsed},
	{Name: "flint.dynamicAllocation.initialExecutors", Kind: KindInt, Group: GroupAllocation,
		Doc: "Executors wanted from the start until the first task runs (Spark's `spark.dynamicAllocation.initialExecutors`); the target is at least `minExecutors`. Unset: `minExecutors`." + allocUsed},
	{Name: "flint.dynamicAllocation.executorIdleTimeout", Kind: KindDuration, Default: "60s", DurationUnit: time.Second, Group: GroupAllocation,
		Doc: "An executor that ran no task this long is released (Spark's `spark.dynamicAllocation.executorIdleTimeout`); never below `minExecutors` or the current target. Must be > 0. A bare number is in seconds." + allocUsed},
	{Name: "flint.dynamicAllocation.cachedExecutorIdleTimeout", Kind: KindDuration, DurationUnit: time.Second, Group: GroupAllocation,
		Doc: "The idle timeout of an executor holding cached partitions (Spark's `spark.dynamicAllocation.cachedExecutorIdleTimeout`). Unset: such executors are never released (Spark's infinity). A bare number is in seconds." + allocUsed},
	{Name: "flint.dynamicAllocation.schedulerBacklogTimeout", Kind: KindDuration, Default: "1s", DurationUnit: time.Second, Group: GroupAllocation,
		Doc: "Tasks waiting this long ask for one more executor (Spark's `spark.dynamicAllocation.schedulerBacklogTimeout`). A bare number is in seconds." + allocUsed},
	{Name: "flint.dynamicAllocation.sustainedSchedulerBacklogTimeout", Kind: KindDuration, Inherit: "flint.dynamicAllocation.schedulerBacklogTimeout", DurationUnit: time.Second, Group: GroupAllocation,
		Doc: "While the backlog lasts, every this long the executors asked for double: 2, 4, 8 … more, never more than the waiting and running tasks need nor `maxExecutors` (Spark's `spark.dynamicAllocation.sustainedSchedulerBacklogTimeout`). Unset: `schedulerBacklogTimeout`. A bare number is in seconds." + allocUsed},
}
