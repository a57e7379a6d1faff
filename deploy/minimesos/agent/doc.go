// Package agent is the minimesos agent: it registers with a minimesos
// master over link, runs what frameworks launch — custom executors as OS
// processes speaking the Mesos v1 executor HTTP API, and command tasks
// through an in-process command executor, task groups through an
// in-process default executor (one process per task, in
// <executor sandbox>/tasks/<task id>) — in Mesos-layout sandboxes,
// forwards status updates reliably, kills and shuts executors down with
// Mesos' semantics, garbage-collects sandboxes, serves sandbox files, and
// recovers running executors of checkpointing frameworks (and their
// unacknowledged status updates) after a restart.
//
// Resources not given in Config.Resources are detected from the host as a
// Mesos agent does (DetectResources). The agent accounts for what its
// executors and live tasks hold and drops a task that does not fit in what
// the master has not yet allocated on it (TASK_LOST, or TASK_DROPPED for
// partition-aware frameworks, REASON_INVALID_OFFERS); the command
// executor's 0.1 cpus / 32 MB are an allowance on top, as in Mesos. It
// enforces no limits on running processes (no cgroups).
//
// Subpackages: containerizer (sandboxes, environment, processes) and
// statusupdate (the status update manager).
package agent
