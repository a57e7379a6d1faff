// Package backoff is Flint's one exponential back-off: Delay, the n-th
// wait of a doubling sequence capped at a maximum (the Mesos backends'
// per-agent launch back-off, executor/files' fetch retries), and Backoff,
// the same sequence with jitter drawn from an injected *rand.Rand and a
// position of its own (the Mesos connection's re-subscriptions). Neither
// reads a clock: callers wait on their own (injected) one.
//
// Retries inside third-party clients keep those clients' own back-off
// (gRPC's reconnection in executor/coarseexec, the AWS SDK's retryer in
// framework/storage/s3): Flint configures them, it does not reimplement
// them.
package backoff
