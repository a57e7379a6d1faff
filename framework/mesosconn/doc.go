// Package mesosconn is Flint's one connection to a Mesos master, shared by the coarse- and
// fine-grained backends. It owns the Mesos v1 scheduler API session and everything that keeps
// it healthy; the backends own what to do with offers and updates, through a Handler.
//
//	              detector (static | ZooKeeper)
//	                     │ leader
//	Start ──► run: SUBSCRIBE ──► stream of events ──► Handler (Offers, Update, …)
//	           ▲  backoff │ watchdog: N× heartbeat silence,        │ Accept/Launch/Decline/
//	           └──────────┘ leader change → drop stream            ▼ Kill/Shutdown/Message
//	control: SUPPRESS/REVIVE on demand change, REVIVE on offer drought,
//	         implicit + explicit reconciliation with backoff, periodic reconciliation
//
// What it does:
//
//   - SUBSCRIBE with a full FrameworkInfo (Config, ConfigFrom): name, user (flint.mesos.user,
//     default $FLINT_USER or the OS user), roles, principal, checkpoint, failover_timeout, webui_url, hostname,
//     labels and capabilities. Flint always declares MULTI_ROLE and sends `roles` (default
//     ["*"]), never the deprecated `role`, so the same code path serves one role or several and
//     offers always carry allocation_info (which Take keeps on the resources it takes).
//   - Framework authentication as HTTP basic with the principal and secret (mesos-go's
//     httpcli.BasicAuth). Protobuf by default; JSON on request.
//   - ACKNOWLEDGE of every status update that carries a uuid, after Handler.Update returned;
//     none for master-generated, uuid-less updates.
//   - Heartbeat monitoring: no event for MissedHeartbeats × the advertised
//     heartbeat_interval_seconds drops the stream. Re-subscription keeps the framework id and
//     waits a truncated exponential backoff with jitter (injected *rand.Rand) between attempts;
//     a leader change reported by the detector drops the stream, resets the backoff and
//     re-subscribes to the new leader at once; a leader still recovering its registry (503
//     "Master has not finished recovery") is asked again every RecoveryRetry (500 ms) less
//     jitter, so the subscription follows the end of its recovery within about a second;
//     307 redirects from a non-leading master are followed by httpsched.
//   - Reconciliation: implicit after every (re)subscription, explicit for every task the Conn
//     knows to be non-terminal (launched through it, or passed to Reconcile) with backoff until
//     an update has come for each, and periodically (implicit plus explicit).
//   - Declines carry refuse_seconds per DeclineReason (flint.mesos.rejectOfferDuration*).
//   - SetDemand sends SUPPRESS or REVIVE only on a change, and REVIVE again when demand is on
//     and no offer came for ReviveInterval.
//   - Stop sends TEARDOWN unless the framework is kept for failover, and returns once the
//     master accepted it. With no live subscription (a master election) it keeps subscribing,
//     without the Handler, for up to TeardownTimeout (flint.mesos.teardownTimeout): Mesos does
//     not carry failover_timeout across a master failover (MESOS-4659), so a framework not torn
//     down would stay on the new leader. Past the bound it logs one warning naming the
//     master's /master/teardown endpoint and the framework id (TeardownError).
//
// Why not mesos-go's extras/scheduler/controller: it has no heartbeat timeout, re-subscribes
// with the framework id only when failover_timeout > 0, backs off on the wall clock with global
// randomness, knows nothing of leader detection, and cannot tell a Handler that a stream was
// lost versus refused for good. The Conn keeps mesos-go's transport layers (httpcli for codecs,
// RecordIO and basic auth; httpsched for Mesos-Stream-Id tracking, 403 "subscription lost" and
// redirects; scheduler/calls to build calls) and runs its own small event loop on an injected
// Clock, so every timing rule above is tested with a fake clock.
//
// Goroutines: one runs subscriptions and calls the Handler (serially, in stream order), one
// watches each stream's heartbeats, one sends background calls (control), one follows the
// detector. Stop waits for all of them. Call methods are safe for concurrent use, including
// from Handler methods (but Stop is not).
//
// Subpackages: detector (master URLs, static and ZooKeeper leader detection) and
// launchbackoff. Offer constraints are placement's (framework/placement/constraints); what
// an offer holds and what a launch takes from it is framework/resource's model (Take and
// Scalar here forward to it).
package mesosconn
