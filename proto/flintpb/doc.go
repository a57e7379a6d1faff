// Package flintpb is the Go code generated from proto/flint.proto (package
// flint.v1) by protoc-gen-gogofaster: the messages the Flint driver and its
// executors exchange.
//
// TaskDescription travels driver → executor and names a registered task
// function, its codec and encoded input; StatusUpdate travels executor →
// driver with the task's state, its result (inline bytes or an
// IndirectResult the driver fetches with FetchResult) or a TaskFailure, and
// TaskMetrics. RegisterExecutor, RegisteredExecutor, Heartbeat, KillTask,
// StopExecutor, FetchResult, ResultBlock, ReleaseResult and StatusUpdateAck
// make up the coarse-grained executor protocol, multiplexed on one stream
// as DriverMessage and ExecutorMessage.
//
// ExecutorGateway (flint.v1.ExecutorGateway/Connect) is the gRPC service
// carrying that stream; its client and server code is generated here too.
// Indirect results travel as ResultBlock chunks (request_id, offset,
// total_size, last) so no gRPC message is large. gRPC must be told to use
// Codec (gogo Marshal/Unmarshal under the standard "proto" content type).
//
// Every message has fast Marshal, Unmarshal and Size methods. Because of the
// Size method, gogo names the Go field of a proto field called size Size_
// (FileRef.Size_, IndirectResult.Size_); the wire and JSON name stay "size". Do not edit
// flint.pb.go: change flint.proto and regenerate (see package proto).
package flintpb
