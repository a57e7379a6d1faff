// Package framework is Flint's public driver API: configuration, the task
// function registry (typed with generics), jobs and their results, listener
// events, and Context, which owns the scheduling core and a backend.
//
// A job's path: RunJob hands a Job to the driver (framework/driver), whose
// loop — one goroutine — owns the driver core: the pure scheduling and DAG
// cores (framework/scheduler, framework/dagscheduler), the job table and
// the registry of executors and their free cores (etcd raft's node around
// RawNode). A backend (local, coarse or fine, implementing the SPI of
// framework/backend and registered there by its package) reports executors,
// their cores and task status updates through backend.Driver, which only
// queues inputs; the loop steps the core with them and hands the backend
// each step's backend.Batch of kills, releases and launches, applied in
// order. Results come back in
// task order, or a *JobError carrying the failing task's last error and
// stack.
//
// Task functions are registered by name, usually from init, so that the same
// binary has them on the driver and on every executor:
//
//	var square = framework.Register("square", func(ctx context.Context, x int) (int, error) {
//		return x * x, nil
//	})
//
//	out, err := framework.Map(ctx, fc, square, []int{1, 2, 3})
//
// Inputs and outputs are encoded with the function's codec: gob by default
// (Go-native, compact, no schema to declare), JSON or any registered codec
// with WithCodec.
package framework
