// Package agent is the minimesos agent: it registers with a minimesos
// master over link, runs what frameworks launch — custom executors as OS
// processes speaking the Mesos v1 executor HTTP API, and command tasks
// through an in-process command executor — in Mesos-layout sandboxes,
// forwards status updates reliably, kills and shuts executors down with
// Mesos' semantics, garbage-collects sandboxes, serves sandbox files, and
// recovers running executors of checkpointing frameworks after a restart.
//
// Subpackages: containerizer (sandboxes, environment, processes) and
// statusupdate (the status update manager).
package agent
