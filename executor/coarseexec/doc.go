// Package coarseexec is the coarse-grained executor (Spark's
// CoarseGrainedExecutorBackend): a long-lived process the coarse Mesos
// backend starts on an agent, which connects back to the driver's gateway
// (coarse/gateway) over one gRPC bidirectional stream and runs the tasks
// the driver sends on an executor.Runtime.
//
//	Run ─► dial driver ─► Connect ─► RegisterExecutor{id, host, cores, agent, token}
//	          ▲                        ◄─ RegisteredExecutor{properties} ─► executor.Runtime (first time)
//	          │ backoff            LaunchTask / KillTask / FetchResult / ReleaseResult ─► runtime
//	          │                    ReleaseShuffle ─► the executor's shuffle deletes those outputs
//	          │                    runtime updates ─► kept until acked ─► StatusUpdate ─►
//	          └─ stream broken     heartbeats every interval ─►          ◄─ StatusUpdateAck
//	             (resend unacked)  StopExecutor ─► close runtime, flush, close stream ─► Run returns nil
//
// The binary the agent starts is the user's program itself (one binary
// plays every role): with FLINT_ROLE set to Role, flint.Main calls Main,
// which reads the environment below and calls Run. Variables the coarse
// backend sets in the Mesos CommandInfo environment:
//
//	FLINT_ROLE              Role ("coarse-executor"), read by the root package
//	FLINT_DRIVER_URL        the driver gateway's address, host:port (required)
//	FLINT_EXECUTOR_ID       the executor id, unique per application (required)
//	FLINT_EXECUTOR_CORES    cores the executor's tasks may occupy (required)
//	FLINT_EXECUTOR_TOKEN    this executor's token (required): the driver's
//	                        gateway.ExecutorToken for FLINT_EXECUTOR_ID, never
//	                        the application secret; read, then removed from
//	                        the process environment
//	FLINT_DRIVER_CERT_SHA256 the driver certificate's SHA-256: the stream is TLS
//	                        and accepts only that certificate (framework/tlspin);
//	                        unset: plaintext
//	FLINT_EXECUTOR_HOST     the host name reported to the driver (default: os.Hostname)
//	FLINT_AGENT_ID          the Mesos agent id
//	FLINT_NETWORK_TIMEOUT   flint.network.timeout (default 120s; a bare number is seconds)
//	FLINT_LOG_LEVEL, FLINT_LOG_FORMAT  executor logging (the token is redacted)
//
// The driver's RegisteredExecutor properties size the runtime:
// flint.task.cpus, flint.driver.maxResultSize and
// flint.task.maxDirectResultSize.
//
// The executor announces RegisterExecutor.batching: it understands
// LaunchTasks and StatusUpdateAcks, and, when the driver's
// RegisteredExecutor.batching is set, sends every status update queued when
// its sender wakes as one StatusUpdates message (report order kept; no
// waiting to fill a batch). With an older driver it sends them one by one.
// A task's RUNNING update still waiting in the queue when its terminal
// update is reported is dropped (the terminal update supersedes it), so a
// task that ends before the sender wakes costs one update instead of two.
//
// Faults: when the stream breaks the executor keeps running its tasks,
// keeps their status updates, and reconnects with exponential backoff
// (Config.RetryMin … RetryMax); after re-registering it resends every
// update the driver has not acknowledged, oldest first (the gateway drops
// duplicates). If the driver stays unreachable for longer than
// Config.Timeout, Run kills the tasks and returns ErrDriverUnreachable, so
// no orphan executor is left on an agent. A wrong token or an invalid
// registration returns ErrRefused at once. Indirect results are sent in
// Config.ChunkSize chunks, after any pending status update.
//
// Shuffle: when the registration answer's settings carry the shuffle's
// (flintpb.ShuffleSettings, read by shuffleenv.SettingsFromWire:
// application id, the application's shuffle token, memory, codec, fetch
// limits), the executor starts its shuffle
// (shuffle/shuffleenv): a store in its own directory under
// flint.local.dir or the sandbox and a TLS shuffle server on Config.Host.
// Every task finds it in its context (shuffleenv.FromContext); its map
// statuses name the server's address. Exiting deletes the directory.
//
// Job configuration: the answer's settings (flintpb.ExecutorSettings) also carry every flint.*
// setting and secret of the job (executor/jobconf.Properties); the executor rebuilds a typed config from them, logs it at
// debug level with secrets redacted, and puts it in every task's context
// (framework.TaskConfig).
//
// This package must not import the coarse backend nor the root flint
// package (which imports it to register Main).
package coarseexec
