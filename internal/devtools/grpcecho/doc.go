// Package grpcecho is the raw gRPC baseline the coarse-mode benchmarks
// compare against: a bidirectional stream with Flint's codec on which the
// client sends a StatusUpdate-sized ExecutorMessage and the server answers
// each with a TaskDescription-sized DriverMessage. No Flint logic is in the
// path, so the message rate it reaches is what loopback gRPC itself allows.
//
// The server runs in the benchmark's process (where the driver runs); the
// client runs either in the same process (Run) or in a child process started
// from the same binary (ClientMain, driven over stdin and stdout), so the
// baseline crosses the same process boundary the driver↔executor traffic
// does.
package grpcecho
