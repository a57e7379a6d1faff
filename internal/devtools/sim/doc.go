// Package sim is a deterministic simulation of a Mesos cluster driving the
// real fine-grained Mesos backend (package fine) and the real task
// scheduling core (framework/scheduler) on virtual time, with faults drawn
// from a seed and invariants checked after every step (issue 28, first
// slice).
//
// It owns three models, all run by one goroutine (Run's):
//
//   - the master: minimesos' pure allocator (deploy/minimesos/allocator)
//     makes offers every allocation interval; ACCEPTs, DECLINEs, REVIVE,
//     SUPPRESS, KILL and SHUTDOWN arrive through the mesosbackend.Conn the
//     sim hands the backend from its mesosbackend.Dialer; events (offers,
//     rescinds, status updates, agent and executor losses) go to the
//     mesosconn.Handler the backend subscribed with;
//   - the agents and their executors: each task runs for a seeded
//     simulated time and ends FINISHED with a result naming its partition;
//     an idle executor exits after flint.mesos.fine.executorIdleTimeout;
//   - a driver loop: the backend.Driver the backend reports to, which
//     places tasks with a scheduler.TaskScheduler on the cores the
//     backend reports and sends it Batches (launches, kills, demand,
//     ticks), standing in for framework's driver loop, which cannot run
//     on virtual time yet (see the package README for what it needs).
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
// after a task's terminal update.
//
// Invariants (checked after every step; the first violation ends the run
// with the seed, the violation and the last steps of the trace):
//
//   - no ACCEPT uses more cpus or memory than its offers hold, nor offers
//     that are not outstanding, nor offers of two agents; no agent runs
//     more than its resources;
//   - every task attempt the driver launched ends exactly once (one
//     terminal update reaches the driver), and no update reaches it for
//     an attempt it never launched;
//   - a job's result is accepted once per partition, and it is the
//     partition's own;
//   - the driver never holds an attempt on more cores than the backend
//     reports for its executor, after each step;
//   - every job finishes (none aborted) and the run quiesces within its
//     virtual time limit.
package sim
