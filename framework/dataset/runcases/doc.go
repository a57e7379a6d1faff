// Package runcases holds tests, run in the three modes of
// internal/testkit/threemode (local[2,4] with task retries, embedded coarse,
// embedded fine), of how a dataset job's tasks run rather than of what
// its operations compute: the task context closures can ask for, the
// size of what every task carries, and the replay of a job's body on
// executors. Each case is a registered job and a test comparing its
// result with one computed in plain Go.
package runcases
