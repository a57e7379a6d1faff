// Package scheduler is Flint's task scheduling core: Spark's
// TaskSchedulerImpl, TaskSetManager, Pool and HealthTracker rebuilt as a pure,
// deterministic state machine.
//
// It owns which task attempt runs where and when: pending lists per executor,
// host and rack; delay scheduling across locality levels; FIFO and FAIR pools;
// retries up to Config.MaxTaskFailures; speculative copies of slow tasks;
// exclusion of executors and nodes after failures; the driver-side result
// size limit; and an explanation for every task that is not placed.
//
// # Input → output
//
// A TaskScheduler does no I/O, starts no goroutines, reads no clock and uses
// no global randomness. Every input is a method call carrying the current
// time; every decision is returned as data:
//
//	Submit(TaskSet, now)                  → error
//	ResourceOffers([]WorkerOffer, now)    → []Launch   (caller builds task descriptions)
//	StatusUpdate(TaskID, Update, now)     → []Event    (success, retry, abort, kills, exclusions)
//	ExecutorLost(executorID, Failure, now)→ []Event
//	Tick(now)                             → []Event    (speculation, exclusion expiry, unschedulable aborts)
//	KillTask / KillTaskSet                → []Event    (KillTask events for the backend)
//	WantsOffers()                         → bool       (Mesos REVIVE / SUPPRESS)
//	Explain(taskSetID, index, now)        → Explanation
//
// The same inputs with the same seeded *rand.Rand give the same outputs. The
// type is not safe for concurrent use: one goroutine, the driver loop, owns it.
// Status updates may be delivered more than once; updates for unknown or
// ended attempts are ignored.
//
// What counts: a failure counts toward MaxTaskFailures and exclusion
// unless it is a kill, a fetch failure, or a loss — an attempt that ended
// Lost (its agent or executor went away; whatever Failure the backend
// gives, its Kind becomes ExecutorLost) or an executor lost without
// ExitCausedByApp. Agents sharing a host name must not get the host
// excluded for a loss that was not its fault (testdata/exclude_lostagent.txt).
// A DiskFull failure also excludes its executor from the task set at once,
// exclusion on failure enabled or not, and aborts the set at once when no
// other known executor can run the task (testdata/diskfull.txt).
//
// See README.md for the structure and the locality algorithm.
package scheduler
