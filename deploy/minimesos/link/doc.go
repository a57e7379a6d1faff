// Package link is the internal protocol between a minimesos master and its
// agents. It is not part of Mesos' public surface (frameworks and executors
// never see it), so it is a small clean protocol of its own, carrying Mesos'
// wire types from mesos-go.
//
// The master implements Master and agents call it; each registered agent
// hands the master an Agent to deliver messages to. In-process agents (tests,
// the embedded master) use the two interfaces directly; agents in other
// processes or hosts use the HTTP transport (Handler on the master, Dial on
// the agent): registration opens a long-lived stream of MasterMessages as
// RecordIO-framed JSON, and agent messages are POSTed.
package link
