// Package master is the minimesos master: Mesos' v1 scheduler HTTP API
// (POST /api/v1/scheduler, protobuf and JSON, RecordIO event streams),
// framework lifecycle (subscription, failover, failover_timeout, removal),
// offers built by the pure DRF allocator, task launch validation, status
// update routing and reconciliation, the master side of the master↔agent
// link (registration, re-registration rebuilding state, health checks,
// agent removal) and the operator endpoints /state, /health and
// /metrics/snapshot, with optional HTTP Basic authentication.
//
// Everything frameworks see follows real Mesos (1.11) exactly; see
// shared/mesos-protocol.md. Out of scope: maintenance (no inverse offers
// are ever made; ACCEPT_INVERSE_OFFERS and DECLINE_INVERSE_OFFERS are
// accepted as no-ops), reservations, persistent volumes and disk
// operations (RESERVE, UNRESERVE, CREATE, DESTROY, GROW_VOLUME,
// SHRINK_VOLUME, CREATE_DISK, DESTROY_DISK are dropped with a warning and
// their resources returned, as Mesos drops operations it cannot apply;
// RECONCILE_OPERATIONS answers OPERATION_UNKNOWN), quota, and
// authorization beyond authentication. There is no registry: a restarted
// master rebuilds frameworks and tasks from re-registering agents.
//
// # Metrics
//
// GET /metrics/snapshot (and /master/metrics/snapshot) answers a flat
// JSON object of numbers named as in Mesos where Mesos has the metric.
// Gauges, computed at each snapshot:
//
//	master/elected, master/uptime_secs
//	master/frameworks_active, _inactive, _connected, _disconnected
//	master/slaves_active, _inactive, _connected, _disconnected, _unreachable
//	master/outstanding_offers
//	master/tasks_staging, _starting, _running, _killing, _unreachable
//	master/tasks_active (all tasks the master tracks; minimesos only)
//	master/<resource>_total, master/<resource>_used (cpus, mem, disk, gpus…;
//	  used by tasks until terminal and by executors, offers excluded)
//	allocator/filters (active refuse filters; minimesos only)
//
// Counters, present from the start:
//
//	master/tasks_finished, _failed, _killed, _lost, _error, _dropped, _gone,
//	  _gone_by_operator: tasks reaching that terminal state, including
//	  master-generated ones (invalid tasks and offers, agent loss,
//	  framework removal); each task is counted once
//	master/task_<state>/source_<source>/reason_<reason>, e.g.
//	  master/task_lost/source_master/reason_invalid_offers (created on first use)
//	master/slave_registrations, master/slave_reregistrations, master/slave_removals
//	master/valid_status_updates, master/invalid_status_updates (unknown framework)
//	master/valid_status_update_acknowledgements,
//	  master/invalid_status_update_acknowledgements (agent unknown or disconnected)
//	master/valid_framework_to_executor_messages, master/invalid_…,
//	  master/valid_executor_to_framework_messages, master/invalid_… (on first use)
//	master/messages_invalid_calls (requests refused with 4xx before dispatch)
//	master/messages_<call> per non-SUBSCRIBE call type, e.g.
//	  master/messages_accept, master/messages_decline (on first use)
//
// minimesos-only counters: master/tasks_launched, master/offers_sent,
// master/offers_declined, master/offers_rescinded (RESCIND events sent,
// for any cause), master/offers_rescinded_timeout (Config.OfferTimeout),
// master/frameworks_registered, master/frameworks_removed,
// master/invalid_offers (ACCEPTs with invalid offers), master/invalid_tasks,
// master/dropped_operations, master/task_kills.
//
// One mutex guards all state; the allocation, heartbeat and agent ping
// loops run on the injected Clock. Faults exposes test-only failure hooks.
package master
