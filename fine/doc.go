// Package fine is the fine-grained Mesos backend (Spark's
// MesosFineGrainedSchedulerBackend), registered as backend.MesosFine
// and chosen with flint.mesos.coarse=false: every Flint task is one Mesos
// task, run by one Flint executor (executor/fineexec) per agent.
//
//	mesosconn.Conn ── offers ─► held per agent; each agent's executor reported to the
//	   ▲                          driver loop as ExecutorUp(slots held + cpus of live tasks)
//	   │   driver loop ── Apply(Batch) ─► owner (in order): kills (KILL), releases,
//	   │                          launches ─► TaskInfos (flint.task.cpus each, description
//	   │                             in TaskInfo.data) ─► one ACCEPT per agent
//	   │                          unused offers: held for flint.mesos.fine.offerHoldTime
//	   │                          (timed by the loop's ticks), then declined with the reason's filter
//	   └── status updates ─► translate (executor's flintpb.StatusUpdate in data) ─► Driver
//	FetchResult ─► HTTP GET of the executor's result server (large results)
//
// Owner. One goroutine, Backend.run, owns the backend's state (live
// tasks, per-agent executors, held offers, kept results, the no-fit
// diagnosis) and makes every call on the Mesos connection and on the
// driver. Its inputs come through one inbox (internal/mailbox) in the
// order they came: the connection's events (queued by the handler the
// connection calls, which returns at once), the driver loop's batches
// (Apply queues them: it never blocks the loop) with their clock ticks,
// the ends of its own timers (on an injected internal/clock.Clock) and
// Stop. Orders the backend relies on are therefore the order of its own
// calls, not of locks: a task's terminal update reaches the driver after
// the capacity its end takes away, a kill after the launch it cancels.
// Other goroutines read what the owner publishes after each round of
// inputs (FrameworkID, Stats, DefaultParallelism, OfferFilters) or ask it
// (FetchResult's result server); Flush waits until the owner handled
// every input queued before it. Tests (and a simulated master) drive it
// through WithDialer and WithClock — internal/testkit/backendharness: a fake
// connection and a fake driver that record its calls.
//
// The driver loop owns how many cores of an executor are free (it counts
// the attempts it launched until their terminal update); the backend owns
// what Mesos holds for the application (the offers in hand and its live
// tasks) and reports their sum as the executor's capacity.
//
// Offers. The held offers of one agent are the capacity of one executor
// whose id is "flint-fine-<agent id>" (stable for the driver's life, so a
// task's executor is its agent). The backend reports that capacity to the
// driver loop as the slots the held offers give plus the cpus of the
// agent's live tasks, whenever it changes, and before the status update of
// a task that ended: the loop, which counts the cores of attempts it
// launched until their terminal update, thus sees exactly the held slots
// free. Only the agents touched since the last report (their live tasks,
// held offers or report changed) are looked at, so an update costs
// O(its agent) plus the agents holding offers, not O(agents); what the
// application holds is counted only under flint.cores.max. A task placed
// on offers that went away meanwhile (declined,
// rescinded) is reported LOST and retried, not counted as a failure. Where the offer does not list that executor
// (Offer.executor_ids, the master's view) a new one is started: its own
// flint.mesos.mesosExecutor.cores and flint.executor.memory +
// flint.mesos.executor.memoryOverhead come out of the offer first, and an
// offer that cannot hold them plus one task is declined as unfit. Tasks
// take flint.task.cpus cpus each and no memory (the executor's memory is
// shared by its tasks, as in Spark) — except one task per executor, which
// may take what the executor's own share leaves of a slot (on a 2-cpu agent
// with the default 0.1-cpu executor: tasks of 1 and 0.9 cpus), so the
// executor costs a fraction of a slot, not a whole one; its task runs in
// the executor's container, whose cpu share is the sum (placement.Slots). Every task of an agent names the same
// ExecutorInfo: the executor binary fetched through flint.executor.uri
// (default: the driver's own executable from its fileserver.Server, content
// hashed, the token in the query and never logged; `executable: true`),
// flint.mesos.uris, the Environment from flint.executorEnv.* plus
// FLINT_ROLE=fine-executor, FLINT_USER, FLINT_LOG_*, GOMEMLIMIT
// (flint.executor.memory, unless flint.executorEnv sets it) and FLINT_GC_FLOOR (the heap
// floor the executor holds, internal/gcfloor; not set when flint.executorEnv.GOGC is), and
// a flintpb.ExecutorSettings in ExecutorInfo.data (flintpb.EncodeSettings:
// task cpus, result limits, the result server secret, the idle timeout).
//
// flint.cores.max bounds the cpus the application holds: its live tasks'
// cpus plus each running executor's flint.mesos.mesosExecutor.cores. A
// round offers the driver only the slots that fit under it (one per agent
// in turn, a new executor's cpus charged with its first task); offers left
// over are declined with the reached-max-cores filter.
//
// Latency. Offers the driver has no task for are held for
// flint.mesos.fine.offerHoldTime (default 1s) instead of declined, so a job
// submitted meanwhile launches on them at once (the driver loop places it
// on the capacity they give) rather than after REVIVE and an allocation. A
// finished task's cpus come back as a new offer only at the master's next
// batch allocation: every 1 s on Apache Mesos by default
// (--allocation_interval), and nothing is re-offered before it, so fine
// mode runs at most (free task slots) / (allocation interval) tasks per
// second — 4 slots gave exactly 4 tasks/s on Apache Mesos 1.12 (issue 29;
// docs/benchmarks.md). A shorter interval raises that bound at the cost of
// more allocator work on the master for every framework; coarse mode,
// whose executors keep their cpus, is not bound by it. minimesos with
// --allocate-on-release (the embedded master) offers freed resources at
// once, and the agent's executor is reused, so there a task costs one
// scheduler-API round trip. Demand
// follows the driver loop's backend.Demand: SUPPRESS when no task waits,
// REVIVE (which clears filters) when tasks come.
//
// Launch back-off. A launch whose tasks end (lost or refused by the master
// or agent, or the executor dying as it starts) before the executor sent
// an update of its own makes further launches on that agent wait
// (framework/mesosconn/launchbackoff, shared with coarse mode: 0.5 s,
// doubling to 30 s); the agent's offers are declined meanwhile, an update
// from an executor there ends it. Such losses reach the driver as LOST
// (retried, not counted) or as the task's failure, never as an agent
// exclusion.
//
// No fit. When tasks wait, none of the application's tasks is live, and for
// flint.mesos.noOfferFitTimeout (default 60s) no offer could hold one, the
// backend calls Driver.Abort with what the offers lacked, per agent (e.g.
// "cpus 4.0 < 5.5 needed (flint.task.cpus + flint.mesos.mesosExecutor.cores)",
// a memory shortfall, unmet constraints, or no offers at all): the jobs fail
// with framework.ErrBackendAborted instead of hanging.
//
// Status updates map to the driver's states:
//
//	STAGING, STARTING                      → nothing (launching)
//	RUNNING, KILLING                       → RUNNING
//	FINISHED                               → FINISHED with the executor's result (inline, or
//	                                         indirect: fetched from the executor's result server)
//	FAILED, ERROR, GONE                    → FAILED (the executor's failure when it sent one,
//	                                         e.g. DECODE_ERROR; counts towards flint.task.maxFailures)
//	KILLED                                 → KILLED
//	LOST, DROPPED, UNREACHABLE, UNKNOWN,
//	GONE_BY_OPERATOR                       → LOST with EXECUTOR_LOST: retried, not counted
//
// Two launch races are LOST too, not the task's failure: the master
// refusing a task placed beside an executor that exited before the launch
// reached it ("Task uses more resources … than available", TASK_ERROR),
// and an agent failing to start such an exited executor again from its
// ExecutorInfo, whose fetch credential ended when it came up
// (CONTAINER_LAUNCH_FAILED on a task placed on a started executor). Once
// Mesos reported an executor's exit (FAILURE), offers that still list it
// start a new one. Executors under one id are generations (each with its
// own fetch credential and exit status; a FAILURE is the oldest launched
// generation's whose exit was not reported yet). A task of an executor
// that died carries, as its message, where it ran, its exit status or
// signal from the FAILURE (its updates wait up to 2 s for it) and the
// last lines of its stderr from the agent's /files/read.
//
// Updates for tasks the backend does not know as live (duplicates after
// the terminal one, other drivers' or long-gone tasks) are ignored; the
// connection acknowledges them all. An executor that exits while none of
// its tasks is live (idle timeout) is reported lost to the driver;
// otherwise its tasks' own terminal updates, which Mesos guarantees, are
// what the driver sees, so a fresh executor under the same id is never
// hurt by an old one's exit.
//
// Large results: the executor keeps results over flint.task.maxDirectResultSize
// (capped at executor/fineexec.MaxInlineResult, 2 MiB, to stay below mesos-go's
// 4 MiB RecordIO record on the scheduler stream) and puts the base URL of its
// result server in the TaskStatus label "flint.results". FetchResult GETs
// <url>/v1/results/<block> with "Authorization: Bearer <secret>", where the
// secret is the executor's own (an HMAC of its id under the application
// secret, which never leaves the driver; it travels only in that executor's
// ExecutorInfo.data), ReleaseResult DELETEs it.
//
// Stop lets the owner handle the inputs queued before it, declines held
// offers and tears the framework down: the master kills every task and the
// agents shut the executors down. Inputs after Stop are dropped.
package fine
