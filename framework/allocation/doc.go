// Package allocation is dynamic allocation's decision core (Spark's
// ExecutorAllocationManager): given what the driver core knows at a moment
// — tasks waiting and running, the executors with the tasks they run, when
// each last became idle, whether it holds cached partitions or shuffle
// outputs no shuffle service would serve — and that moment, it decides how
// many executors the application wants (the target, counting ones still
// launching) and which idle executors to release. It is pure and
// single-threaded: no clock, no goroutine, no I/O; the same inputs give the
// same decisions, which golden scripts in testdata/ check step by step, and
// each decision carries its reasons.
//
// The rules are Spark's:
//
//   - The target starts at max(minExecutors, initialExecutors) and stays
//     there until the first task is seen or an executor's idle timeout
//     expires (Spark's "initializing"), so an application does not give its
//     executors back before its first job.
//   - Executors needed = ⌈(waiting + running tasks) / tasks per executor⌉.
//     When the target is above that, it drops at once to
//     max(needed, minExecutors): no executor is killed for it, the backend
//     just stops launching.
//   - When tasks have waited schedulerBacklogTimeout, the target rises by 1,
//     then — each sustainedSchedulerBacklogTimeout the backlog lasts — by 2,
//     4, 8 …, never above the needed count or maxExecutors. The backlog
//     clearing resets the step to 1.
//   - An executor idle for executorIdleTimeout (cachedExecutorIdleTimeout
//     when it holds cached partitions; never by default, as Spark) is
//     released, unless that would leave fewer executors than minExecutors
//     or the target. Without a shuffle service, an executor holding shuffle
//     outputs a live shuffle still needs is kept (Spark's shuffle tracking):
//     releasing it would lose them.
//
// The backend applies a Decision: it launches from offers up to the target
// (RequestTotalExecutors) and kills the executors named (KillExecutor).
// Fine-grained mode needs none of this: each task is its own Mesos task, so
// it holds resources only while tasks run.
package allocation
