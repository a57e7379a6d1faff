// Package drivermetrics holds the driver's Prometheus metrics, served on
// the web UI's /metrics.
//
// Listener turns listener events into per-application metrics: jobs, stages
// and tasks started and ended by state, running counts, a task duration
// histogram, executors, result and shuffle bytes. Mesos counts what the
// Mesos connection sees (offers received, declined by reason,
// re-subscriptions): they are process-wide, as the connection's code has no
// handle on an application, and framework/mesosconn increments them.
// Registry builds the registry /metrics serves: both, plus Go's runtime and
// process collectors.
package drivermetrics
