// Package mailbox is the inbox of a goroutine that owns some state (etcd
// raft's node, the driver loop, the Mesos backends): any goroutine Puts
// inputs without blocking, the owner waits on Wake and Takes everything
// queued, in the order it was put. Close ends it: later Puts are refused
// (dropped by the caller), so an owner that has stopped is never written to.
package mailbox
