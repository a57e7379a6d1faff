// Package mesoshttp is the HTTP plumbing shared by minimesos' Mesos v1 APIs
// (the master's scheduler API and the agent's executor API): media type
// negotiation for application/x-protobuf and application/json, decoding of
// Call bodies of either codec into mesos-go's gogo messages, a RecordIO
// stream writer (and a bounded reader) and helpers that write Mesos' exact
// error answers (status code and plain text body).
//
// It knows nothing about schedulers, executors or Flint; it only encodes
// what real Mesos does on the wire.
package mesoshttp
