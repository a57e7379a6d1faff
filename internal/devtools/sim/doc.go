// Package sim is a deterministic simulation of a Mesos cluster driving the
// real driver (framework/driver) and a real Mesos backend — fine-grained
// (package fine) or, for half the seeds, coarse-grained (package coarse,
// whose executors' gateway the sim plays through coarse.WithStreams) — on
// virtual time, with faults drawn from a seed and invariants checked after
// every step (issue 28).
//
// It owns two models and runs the real driver, all on one goroutine
// (Run's):
//
//   - the master: minimesos' pure allocator (deploy/minimesos/allocator)
//     makes offers every allocation interval; ACCEPTs, DECLINEs, REVIVE,
//     SUPPRESS, KILL, SHUTDOWN and framework messages arrive through the
//     mesosbackend.Conn the sim hands the backend from its
//     mesosbackend.Dialer; events (offers, rescinds, status updates,
//     agent and executor losses) go to the mesosconn.Handler the backend
//     subscribed with;
//   - the agents and their executors: each task runs for a seeded
//     simulated time, then its body is simulated (exec.go): a map task
//     writes blocks of known sizes its executor then serves; a reduce
//     task reads the blocks its executor cuts from the driver's map
//     statuses (a stagetask.MapStatuses per executor, loaded from the
//     driver once per epoch, as a real executor's) from the executors
//     they name — a block whose executor is gone or no longer holds it is a
//     fetch failure naming it — and returns a value that counts and sums
//     what it read; an executor serving no output exits after
//     flint.mesos.fine.executorIdleTimeout, a shuffle release (framework
//     message) drops its outputs;
//   - the real driver (framework/driver.Driver: the loop, task and DAG
//     cores, map-output tracker, placement on the executors' cores), not
//     started: the sim submits two-stage jobs (Driver.Submit) and steps
//     it (Driver.Step) at its virtual clock, ticking every 100 ms as
//     framework's loop does, and releases a job's shuffle when it ended.
//
// The backend keeps its single owner goroutine: the sim posts one input
// (an event to its handler, a Batch, an advance of its clock.Fake), then
// Flushes it, and handles the calls the backend made meanwhile (recorded
// in order) before the next input. Nothing else runs concurrently, so a
// run is a function of its seed; Run returns a digest of its trace to
// prove it.
//
// Faults (Config.Faults, each drawn from the seed): agents lost (their
// tasks LOST, offers rescinded, the agent back later under a new id);
// status updates duplicated; updates delayed by seeded jitter, which
// reorders them across tasks, and with Reorder a stale RUNNING delivered
// after a task's terminal update; offers rescinded; slow agents
// (stragglers, for speculation); master failovers and driver↔master
// network partitions (calls lost, events held, then a re-subscription,
// after which the master answers the connection's explicit
// reconciliation: TASK_LOST for a task it never heard of); and the driver
// process dying (restart.go): a new driver and backend subscribe with the
// same framework id after 1–20 s, the master (which kept the framework,
// its tasks and executors, and held their updates) answers its implicit
// reconciliation, and the new driver runs every job again.
//
// Invariants (checked after every step; the first violation ends the run
// with the seed, the violation and the last steps of the trace):
//
//   - no ACCEPT uses more cpus or memory than its offers hold, nor offers
//     that are not outstanding, nor offers of two agents; no agent runs
//     more than its resources;
//   - every task attempt the driver launched ends exactly once (one
//     terminal update reaches the driver), and no update reaches it for
//     an attempt it never launched — per driver: no Mesos task id is
//     launched by two drivers, and a successor counts no update of its
//     predecessor's tasks;
//   - a job's results are its partitions' own, each computed from every
//     map output read exactly once (a value built from a stale or partial
//     snapshot of the map-output tracker differs), and no job fails;
//   - each result partition is accepted once, from the first of its
//     successes to reach the driver (every value names its attempt), and
//     map tasks' accumulator updates (their values, through the job's
//     OnMapOutput) are applied once per successful attempt;
//   - the framework holds no more cpus than flint.cores.max, as the
//     master accounts them;
//   - the map-output tracker holds no output written by an attempt on an
//     executor the backend reported lost before (checked after every
//     step, against the tracker itself: Driver.InspectMapOutputs);
//   - no executor is left once the jobs ended and their shuffles were
//     released, nothing of a dead driver once its successor's jobs ended,
//     and the run quiesces within its virtual time limit (so
//     resubmissions terminate);
//   - the driver's memory per map output and per task stays within the
//     bounds memory.go states: the map-output tracker's bytes per shuffle
//     (a record per map, a byte per reducer below 2,000 reducers, the
//     highly compressed form's bitmap and average from there on) and per
//     location, and the driver core's attempts, task sets, jobs and stage
//     statuses (Driver.InspectRetained) no more than are live.
package sim
