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
// One mutex guards all state; the allocation, heartbeat and agent ping
// loops run on the injected Clock. Faults exposes test-only failure hooks.
package master
