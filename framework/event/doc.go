// Package event defines the listener events a Flint driver emits (job, stage
// and task start and end, executors added and removed) and the Bus that
// delivers them to listeners.
//
// Like Spark's LiveListenerBus, delivery is asynchronous: each listener has
// its own goroutine and a bounded queue, so a slow listener never stalls the
// scheduler. When a listener's queue is full the event is dropped for that
// listener and counted (see Bus.Dropped); the driver's status tracker, which
// feeds the progress bar, is updated synchronously and never drops.
package event
