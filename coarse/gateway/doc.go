// Package gateway is the driver's end of the coarse-grained executor
// protocol (Spark's CoarseGrainedSchedulerBackend endpoint): a gRPC server
// (flintpb.ExecutorGateway) that executors started by the coarse backend
// connect back to, and the registry of the executors connected to it.
//
//	executor/coarseexec ══ Connect stream (one per executor) ══► Gateway ──Events──► coarse backend
//	   RegisterExecutor{token} ─►  check secret, id unique   ─► ExecutorRegistered
//	   ◄─ RegisteredExecutor{properties, heartbeat interval}
//	   ◄─ LaunchTask / KillTask / StopExecutor / FetchResult / ReleaseResult / ReleaseShuffle ◄─ Launch, Kill, …
//	   StatusUpdate ─►  dedup by uuid ─► StatusUpdate event ─► then ◄─ StatusUpdateAck
//	   Heartbeat ─►     silence > Timeout, stream broken or ended ─► ExecutorLost
//	   ResultBlock chunks ─► reassembled for FetchResult
//
// Owners. One goroutine, the registry loop (Gateway.run), owns the
// registry: every live stream, the registered executors, their dedup
// windows across sessions and the silence checks. A stream opening,
// registering (the duplicate-id check, the RegisteredExecutor answer
// queued before the executor becomes visible) and ending, and Serve, are
// its inputs, which it runs one at a time; after each change it publishes
// the registered executors as a map it never modifies again, which Launch,
// Kill, StopExecutor, FetchResult and Executors read without waiting on it.
// Each stream has its own sender, the stream handler's writeLoop, which
// owns the stream's sending side and takes messages and acks from the
// stream's mailbox (internal/mailbox) in the order they were queued; its
// readLoop owns the receiving side, the executor's dedup window and the
// chunks of pending fetches. No mutex of the package's own guards any of
// it.
//
// Security is on by default: Config.Secret is required (NewSecret makes one
// per application) and never leaves the driver: each executor gets its own
// ExecutorToken (an HMAC of its id under the secret; the coarse backend
// hands it over as FLINT_EXECUTOR_TOKEN), so a token read from an agent's
// state or a process environment registers no other executor. The token in
// RegisterExecutor is checked against the claimed id in constant time; a
// wrong one ends the stream with codes.Unauthenticated before anything
// registers. The secret and tokens
// are never logged. A second registration of a live executor id ends with
// codes.AlreadyExists. With Config.TLS the stream is TLS (the coarse backend
// sets it by default from tlspin.Server, and executors pin that
// certificate); without it, plaintext gRPC.
//
// Batching: an executor that sets RegisterExecutor.batching gets launches
// queued together in one LaunchTasks (LaunchTasks hands over all of one
// executor's tasks at once) and acks in one StatusUpdateAcks (each uuid
// once); the gateway sets RegisteredExecutor.batching, so the executor may
// send StatusUpdates batches, delivered in order. The writer sends whatever
// is queued when it wakes and never waits to fill a batch. Executors that
// do not announce batching get one LaunchTask and one StatusUpdateAck per
// task and update, as before.
//
// Delivery: status updates are at least once on the wire and exactly once
// to Events. The executor keeps each update until it gets a
// StatusUpdateAck, which the gateway sends after Events.StatusUpdate
// returns; after a reconnect the executor resends what was not acked and
// the gateway drops uuids it has delivered (it remembers the last
// Config.DedupWindow uuids of each executor, across its sessions, until the
// executor has been away for twice Config.Timeout). A stream that breaks makes the executor lost
// at once (ExecutorLost); the executor may register again under the same
// id afterwards, which is a new ExecutorRegistered.
//
// Liveness: every message from an executor counts as a sign of life; an
// executor silent for longer than Config.Timeout (flint.network.timeout)
// is lost, checked every Config.CheckInterval on Config.Clock. gRPC
// keepalive pings close connections whose peer stopped reading, so a send
// blocked by flow control never outlives the timeout.
//
// Sizes: one gRPC message may be up to Config.MaxMessageSize (128 MiB by
// default, deliberately above gRPC's 4 MiB, because task inputs and inline
// results up to flint.task.maxDirectResultSize ride single messages).
// Batches (LaunchTasks here, StatusUpdates on the executor) hold at most
// flintpb.BatchBytes of tasks or updates, so large inputs or results
// launched or finishing together travel in several messages; one larger
// than that travels alone.
// Indirect results are streamed in ResultBlock chunks (1 MiB by default)
// on the executor's stream, interleaved with its status updates, so their
// size is bounded only by Config.MaxResultSize (flint.driver.maxResultSize).
//
// Mapping from configuration, for the coarse backend: Secret ←
// flint.authenticate.secret (or NewSecret), Timeout ← flint.network.timeout,
// HeartbeatInterval ← flint.executor.heartbeatInterval, MaxResultSize ←
// flint.driver.maxResultSize, Settings (flintpb.ExecutorSettings) ←
// flint.task.cpus, flint.driver.maxResultSize and
// flint.task.maxDirectResultSize (in bytes), which the executor sizes its
// runtime from, the shuffle's settings and every flint.* setting.
package gateway
