// Package fineexec is Flint's Mesos executor for fine-grained mode (Spark's
// MesosExecutorBackend): a custom executor on the Mesos v1 executor HTTP
// API that runs every Mesos task it is given in an executor.Runtime.
//
//	agent ──SUBSCRIBED (ExecutorInfo.data = Settings)──► Executor ──► executor.Runtime
//	      ──LAUNCH (TaskInfo.data = flintpb.TaskDescription)──►   │ RUNNING, then
//	      ──KILL / SHUTDOWN / ACKNOWLEDGED──►                     ▼ terminal update
//	      ◄──UPDATE (TaskStatus.data = flintpb.StatusUpdate)── senders (per-task order)
//	driver ──GET /v1/results/{block} (Bearer secret)──► result server (large results)
//
// The fine backend starts one executor per agent per driver (executor id
// "flint-fine-<agent id>") through ExecutorInfo.command: the Flint binary
// itself, fetched by the agent, with FLINT_ROLE=fine-executor and the
// MESOS_* environment the agent sets (read with mesos-go's
// executor/config.FromEnv). Everything else — task cpus, result limits, the
// result-server secret, the idle timeout, logging — comes in
// ExecutorInfo.data as a flintpb.ExecutorSettings (proto/contract; read
// into Settings), so no secret is in the environment
// (which Mesos' /state shows).
//
// Protocol, as Mesos' executor-http-api.md asks:
//
//   - SUBSCRIBE on start and again after a broken connection, carrying every
//     update not yet ACKNOWLEDGED and every task whose terminal update is not
//     acknowledged, so an agent restarted with checkpointing recovers them.
//     Without checkpointing a lost agent connection ends the executor (its
//     tasks are killed); with it the executor re-subscribes with backoff up
//     to MESOS_SUBSCRIPTION_BACKOFF_MAX until MESOS_RECOVERY_TIMEOUT.
//   - LAUNCH decodes TaskInfo.data and starts the task in the runtime. Data
//     that does not decode fails the task with TASK_FAILED and a
//     DECODE_ERROR failure (deterministic: the driver aborts the job rather
//     than retry it); a task the runtime refuses fails with LAUNCH_FAILED.
//   - Every task gets TASK_RUNNING and then one terminal update whose data
//     is the runtime's flintpb.StatusUpdate (result inline, or a pointer to
//     a kept result, or the failure). Updates are sent by several senders,
//     each task always on the same one, so a task's updates stay in order
//     while tasks do not queue behind each other.
//   - KILL kills the task in the runtime (TASK_KILLED follows); SHUTDOWN
//     kills every task, waits (within MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD)
//     for their terminal updates to be acknowledged and exits.
//   - ACKNOWLEDGED drops the update; an acknowledged terminal update drops
//     the task.
//
// Results larger than the inline limit (flint.task.maxDirectResultSize,
// capped at MaxInlineResult so that an UPDATE event stays far below
// mesos-go's 4 MiB RecordIO record limit on the scheduler stream) are kept
// by the runtime and served by the executor's result server on the address
// that routes to the driver: HTTPS with a self-signed certificate when
// Settings.TLS (the default, flint.network.tls.enabled), else plain HTTP;
// GET and DELETE /v1/results/{block id} with "Authorization: Bearer
// <secret>" (the executor's own secret from Settings; compared in constant
// time; 401 otherwise). The terminal update carries the server's base URL
// in the TaskStatus label LabelResults and the certificate's SHA-256 in
// LabelResultsPin; the driver accepts only that certificate, fetches the
// block, checks its size and SHA-256, and releases it.
//
// Lifetime: the executor exits when the agent sends SHUTDOWN (the driver
// stopped, or the master removed the framework because the driver went
// away), when the agent connection is lost for good, and after
// Settings.IdleTimeout without a task (so no CPU stays pinned between jobs;
// Spark's executors never left). A LAUNCH that races with the idle exit is
// answered TASK_LOST, which the driver retries without counting a failure.
//
// Shuffle: Settings.Shuffle (flintpb.ShuffleSettings, read by
// shuffleenv.SettingsFromWire) gives the executor a shuffle
// (shuffle/shuffleenv): a store under flint.local.dir or the
// sandbox and a TLS shuffle server on the address that routes to the
// driver, reported at the agent's host name; tasks find it in their
// context. While it holds committed map outputs the executor does not exit
// on idle — reducers may still read them — until the driver releases the
// shuffles with a framework message (contract.ShuffleReleaseMessage) or goes
// away (SHUTDOWN). Exiting deletes the files.
package fineexec
