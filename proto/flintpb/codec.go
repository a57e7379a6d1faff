package flintpb

import "fmt"

// CodecName is the name Codec gives gRPC: "proto", so that the content type
// stays application/grpc+proto and any standard gRPC client interoperates
// (gogo's Marshal produces the standard protobuf wire format).
const CodecName = "proto"

// Codec is a gRPC codec (google.golang.org/grpc/encoding.Codec) over the
// gogo-generated Marshal/Unmarshal methods. gRPC's default proto codec
// expects google.golang.org/protobuf messages, which flintpb's are not, so
// servers and clients of ExecutorGateway must force this codec:
// grpc.ForceServerCodec(flintpb.Codec{}) and
// grpc.WithDefaultCallOptions(grpc.ForceCodec(flintpb.Codec{})). It is not
// registered globally, so other gRPC users in the process are unaffected.
type Codec struct{}

// gogoMessage is what every generated message implements.
type gogoMessage interface {
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
}

// Marshal encodes v, which must be a flintpb message.
func (Codec) Marshal(v any) ([]byte, error) {
	m, ok := v.(gogoMessage)
	if !ok {
		return nil, fmt.Errorf("flintpb: codec cannot marshal %T", v)
	}
	return m.Marshal()
}

// Unmarshal decodes data into v, which must be a flintpb message. The
// generated Unmarshal copies bytes fields, so data may be reused afterwards.
func (Codec) Unmarshal(data []byte, v any) error {
	m, ok := v.(gogoMessage)
	if !ok {
		return fmt.Errorf("flintpb: codec cannot unmarshal into %T", v)
	}
	return m.Unmarshal(data)
}

// Name returns CodecName.
func (Codec) Name() string { return CodecName }
