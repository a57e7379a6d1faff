// Package executor owns the executor runtime (Spark's Executor): the part
// of an executor process that runs tasks, independent of how tasks arrive.
//
// A Runtime has a fixed number of cores. Launch takes a
// flintpb.TaskDescription, reserves its cpus and runs the registered task
// function (framework/task) on a worker goroutine of its own (a parked
// worker of an earlier task when one is idle, so grown stacks are reused;
// at most Cores stay parked, until Close), reporting a TASK_RUNNING
// update and then exactly one terminal update (TASK_FINISHED, TASK_FAILED or
// TASK_KILLED) through the Reporter. The cores are released before the
// terminal update is reported, so the receiver can launch the next task
// straight away.
//
//	Launch ─► worker:    RUNNING ─► lookup ─► decode ─► fn ─► encode ─► size checks
//	                                                     ▲               │
//	Kill/Close ──── cancels the task's context ──────────┘    release cores, report
//
// Panics in task functions are recovered into TASK_FAILED/PANIC with the
// stack. An error that is a full file system (ENOSPC, or EDQUOT for a
// quota: a shuffle or cache file, an output part, a fetched file) fails
// the task with DISK_FULL and one message naming the file once, which the
// driver's scheduler retries on other executors only. A result larger than Config.MaxResultSize fails the task with
// RESULT_TOO_LARGE; one larger than Config.MaxDirectResultSize is kept in
// the runtime and the update carries an IndirectResult the driver fetches
// with FetchResult and frees with ReleaseResult; smaller results travel
// inline.
//
// Because workers are reused, a task function must not leave its goroutine
// locked to an OS thread (runtime.LockOSThread without UnlockOSThread): the
// lock would carry over to later tasks on that worker (harmless but it pins
// a thread). Always call Close: parked workers live until then.
//
// The Mesos coarse-grained executor (executor/coarseexec), the Mesos executor
// (executor/fineexec) and local mode wrap a Runtime; they own the transport.
package executor
