// Package proto holds the protobuf sources of the messages the Flint driver
// and its executors exchange (flint.proto, package flint.v1). The generated
// Go code lives in package flintpb.
//
// The code is generated with protoc (3.21) and protoc-gen-gogofaster from
// github.com/gogo/protobuf v1.3.2 (pinned in tools.go), with its grpc plugin
// for the ExecutorGateway service (the generated service code builds against
// google.golang.org/grpc as pinned in go.mod; gRPC must use flintpb.Codec,
// see there). To regenerate:
//
//	GOBIN=$PWD/bin go install github.com/gogo/protobuf/protoc-gen-gogofaster
//	PATH=$PWD/bin:$PATH go generate ./proto/...
package proto

//go:generate protoc --proto_path=. --gogofaster_out=plugins=grpc,paths=source_relative:flintpb flint.proto
