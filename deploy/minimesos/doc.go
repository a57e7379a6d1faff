// Package minimesos is Flint's lightweight, wire-compatible Apache Mesos
// stand-in: a master that speaks the Mesos v1 scheduler HTTP API and agents
// that really launch executors and command tasks and speak the v1 executor
// HTTP API. Real Mesos frameworks and executors (mesos-go or hand-written)
// run against it unchanged. It imports Mesos' wire types from mesos-go and
// never Flint's framework code.
//
// Subpackages:
//   - allocator: the pure DRF allocator (offers, filters, suppress/revive)
//   - master: the scheduler API, framework lifecycle, tasks, reconciliation,
//     agent registry and operator endpoints
//   - agent: containerizer, executor API, status update manager, command
//     executor, recovery, sandbox files
//   - link: the internal master↔agent protocol, in-process or over HTTP
//   - mesoshttp: HTTP plumbing shared by the v1 APIs (media types, RecordIO)
package minimesos
