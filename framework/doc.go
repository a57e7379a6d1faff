// Package framework is Flint's public driver API: configuration, the task
// function registry (typed with generics), jobs and their results, listener
// events, and Context, which owns the scheduling core and a backend.
//
// A job's path: RunJob turns a Job into a task set for the pure scheduling
// core (framework/scheduler); a Backend (local, coarse or fine, registered by
// their packages through RegisterBackend) feeds the core resource offers and
// task status updates through the Driver interface and launches the task
// descriptions the core chooses. Results come back in task order, or a
// *JobError carrying the failing task's last error and stack.
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
