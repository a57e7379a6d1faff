// Package coarse is the coarse-grained Mesos backend (Spark's
// MesosCoarseGrainedSchedulerBackend), registered as
// backend.MesosCoarse: it turns Mesos offers into long-lived
// executor processes and reports them, with their cores, to the driver
// loop, which places tasks on them and hands the backend ordered batches.
//
//	driver loop ◄─ ExecutorUp / StatusUpdate / ExecutorLost / Abort (queued inputs) ─┐
//	     │ Apply(Batch): kills, releases, launches, demand, ticks                     │
//	     ▼                                                                            │
//	mesosconn.Conn ── offers ─► plan: constraints, excluded agents, flint.cores.max,  Backend
//	   ▲                        executor cores/mem/GPUs, round-robin ─► LAUNCH          │
//	   └── task status of executors (terminal → executor lost, agent failures) ────────┤
//	                                                                                   │
//	gateway.Gateway ◄══ gRPC stream ══ executor process (FLINT_ROLE=coarse-executor)   │
//	   registered → ExecutorUp(cores); task updates → StatusUpdate ───────────────────┘
//
// Owner. One goroutine, Backend.run (owner.go), owns the backend's state
// (executors and the cores they hold, agent failures and launch back-offs,
// the no-executor diagnosis, death reports held for a Mesos status) and
// makes every call on the Mesos connection, on the executors' gateway
// streams and on the driver. Its inputs come through one inbox
// (internal/mailbox) in the order they came: the connection's events and
// the gateway's (registrations, status updates, broken streams), queued by
// handlers that return at once; the driver loop's batches with their clock
// ticks (Apply queues them: it never blocks the loop); the ends of its own
// timers on an injected internal/clock.Clock (WithClock: the grace a broken
// stream's executor gets for its Mesos status, Stop's waits);
// RequestTotalExecutors, KillExecutor and Stop's steps. Orders the backend
// relies on are the order of its own calls: a kill is queued on a stream
// after the launch it cancels, an executor's status updates reach the
// driver before its loss. Other goroutines read what the owner publishes
// after each round of inputs (FrameworkID, Executors, DefaultParallelism,
// OfferFilters); FetchResult goes to the gateway directly. Flush waits until
// the owner handled every input queued before it. Tests drive it through
// internal/testkit/backendharness (WithDialer, WithStreams, WithClock): a fake
// connection, fake executor streams and a fake driver record its calls.
//
// The backend keeps no mirror of the executors' free cores: the driver loop
// counts the cores of the attempts it launched until their terminal update.
//
// Each executor is a Mesos task whose CommandInfo fetches the executor binary
// (flint.executor.uri; by default the driver's own executable, published by
// the driver's fileserver.Server under its SHA-256 with the server's token in the
// URL query, never logged) and runs it without a shell with FLINT_ROLE,
// FLINT_DRIVER_URL, FLINT_EXECUTOR_ID, FLINT_EXECUTOR_CORES, FLINT_EXECUTOR_TOKEN (its
// own token, derived from the application secret, which stays in the driver),
// FLINT_DRIVER_CERT_SHA256 (the pin of the gateway's self-signed TLS
// certificate; flint.network.tls.enabled, on by default),
// FLINT_AGENT_ID, FLINT_EXECUTOR_HOST, FLINT_NETWORK_TIMEOUT, FLINT_LOG_*,
// FLINT_USER, GOMEMLIMIT (flint.executor.memory, unless flint.executorEnv sets it),
// FLINT_GC_FLOOR (the heap floor the executor holds, internal/gcfloor: 1/16 of
// flint.executor.memory, at most 256 MiB; not set when flint.executorEnv.GOGC is) and
// flint.executorEnv.* in its Mesos Environment.
//
// Sizing follows Spark: executors are launched until flint.cores.max; an
// executor takes flint.executor.cores (several per offer) or, when unset,
// every whole CPU of the offer up to the cap (one per offer); memory is
// flint.executor.memory plus flint.mesos.executor.memoryOverhead (default
// max(384 MiB, 10%)); GPUs up to flint.mesos.gpus.max. Offers are used
// round-robin, one executor per offer per round, offers from the hosts more
// pending tasks prefer first (the driver loop's backend.Demand,
// Spark's hostToLocalTaskCount). When the backend is capped
// (flint.cores.max or RequestTotalExecutors) and pending tasks prefer
// hosts that run no executor yet, offers from other hosts are declined for
// up to flint.locality.wait, so that the executors the cap allows start
// where the tasks want to run (Spark's satisfiesLocality). Declines carry the reason
// that selects their refuse filter (unmet constraints, max cores reached, no
// demand, unfit). SUPPRESS/REVIVE follow whether more executors are wanted.
//
// Faults: an executor whose Mesos task ends, or whose gateway stream breaks
// or times out, is reported lost to the driver (which resubmits its running
// tasks; results already reported stay) and its process is stopped or
// killed; an id once lost is never used again. flint.mesos.executor.
// maxFailuresPerAgent failures on an agent exclude it for
// flint.mesos.executor.agentExclusionTimeout. While tasks wait and no
// executor could start, an error after flint.mesos.noOfferFitTimeout
// (checked on the driver loop's clock ticks) names what the offers lack.
//
// Stop asks every executor to stop, waits up to
// flint.mesos.coarse.shutdownTimeout for their Mesos tasks to end, kills the
// rest through Mesos, tears the framework down and closes the gateway and
// file server. RequestTotalExecutors and KillExecutor are the dynamic
// allocation hooks.
package coarse
