// Package containerizer is the minimesos agent's posix containerizer: it
// lays out sandboxes the way Mesos does
// (<work_dir>/slaves/<agent>/frameworks/<fw>/executors/<ex>/runs/<container>),
// builds the executor environment (MESOS_* variables in Mesos' formats, then
// CommandInfo.environment), starts commands with Mesos' shell semantics in
// their own process group, optionally as another user, with stdout and
// stderr files in the sandbox, and stops whole process trees with SIGTERM
// followed by SIGKILL after a grace period.
//
// It knows nothing about executors, tasks or the master: the agent package
// decides what to launch and when to kill it.
package containerizer
