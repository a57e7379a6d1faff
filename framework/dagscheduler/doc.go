// Package dagscheduler is Flint's DAG core: Spark's DAGScheduler rebuilt
// as a pure, deterministic state machine beside the task core
// (framework/scheduler).
//
// It turns a job — an action over a lineage of datasets given as data
// (Node, Dep, JobSpec) — into stages split at shuffle dependencies, with
// narrow dependencies pipelined into one stage: a ShuffleMapStage per
// shuffle (keyed by shuffle id and shared across jobs, so a second action
// over the same lineage skips map stages whose outputs are all available)
// and one ResultStage per job. It submits each stage's missing partitions
// as a TaskSet, records map outputs in its map-output tracker
// (framework/mapoutput) and recomputes lost outputs, with Spark's failure
// semantics:
//
//   - a fetch failure fails the reading stage's attempt, unregisters the
//     output it could not read and every output of the executor it read
//     from (once per epoch), and resubmits the missing map partitions and
//     then the reading stage after Config.ResubmitDelay (200 ms), so that
//     the burst of failures one lost executor causes is one resubmission;
//   - Config.MaxConsecutiveStageAttempts (flint.stage.maxConsecutiveAttempts,
//     4) failed attempts of one stage in a row abort its jobs; fetch
//     failures never count as task failures (the task core makes the
//     attempt's task set a zombie instead);
//   - a lost executor's outputs are unregistered at once (there is no
//     external shuffle service): a running map stage recomputes them when
//     its attempt ends, before any reader starts;
//   - every task carries its stage attempt and the tracker's epoch, so late
//     results from superseded attempts, lost executors and ended jobs are
//     recognised and dropped (TaskIgnored says why);
//   - a map stage with indeterminate output is rolled back as a whole with
//     everything downstream when any of its outputs is lost (at the fetch
//     failure, or when it is resubmitted after an executor loss); results
//     already accepted from it are revoked and recomputed when the job holds
//     them until it ends (JobSpec.ResultsHeld, as RunStages does), else the
//     job fails with a message saying so, as in Spark;
//   - reduce tasks prefer hosts holding at least 20 % of their input,
//     cached partitions their executors, input splits their hosts.
//
// # Input → output
//
// The core does no I/O, starts no goroutines, reads no clock and uses no
// randomness. Every input is a method call carrying the current time;
// every decision is returned as an ordered list of events the driver
// applies in order:
//
//	SubmitJob(JobSpec, now)                    → job id, []Event, error
//	TaskEnded(TaskEnd, now)                    → []Event  (success with map status, fetch failure)
//	TaskSetFailed(stage, attempt, reason, now) → []Event  (the task core aborted the set)
//	ExecutorLost(exec, host, hostLost, now)    → []Event
//	CancelJob / CancelStage(id, reason, now)   → []Event
//	Tick(now)                                  → []Event  (the resubmit timer; NextWake says when)
//	CacheAdded / CacheRemoved / ReleaseShuffle
//	Explain(stage), Progress()                 → what waits on what, which partitions are missing and why
//
// Events: SubmitTaskSet and CancelTaskSet for the task core,
// ResultAccepted (keep that attempt's result), JobStarted, JobSucceeded,
// JobFailed, StageSubmitted, StageCompleted, OutputsLost,
// ResubmitScheduled and TaskIgnored for listeners and the UI.
//
// A TaskSet names what executors run: the job (by its registered name, so
// the dataset layer can rebuild the graph), the last node of the stage's
// pipeline, the partitions, and for map tasks the shuffle to write; Task
// is one of its tasks. The type is not safe for concurrent use: the driver
// loop owns it. See README.md for the state of a stage and how the two
// cores fit.
package dagscheduler
