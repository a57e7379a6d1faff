package flintpb_test

import (
	"testing"

	"github.com/gogo/protobuf/proto"
	"google.golang.org/grpc/encoding"

	"github.com/flint-mesos/flint/proto/flintpb"
)

var _ encoding.Codec = flintpb.Codec{}

func TestCodecRoundTrip(t *testing.T) {
	c := flintpb.Codec{}
	in := &flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_ResultBlock{ResultBlock: &flintpb.ResultBlock{
		BlockId: "taskresult_7", Data: []byte{1, 2, 3}, RequestId: 9, Offset: 1 << 20, TotalSize: 3 << 20, Last: true,
	}}}
	data, err := c.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := new(flintpb.ExecutorMessage)
	if err := c.Unmarshal(data, out); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(in, out) {
		t.Fatalf("round trip changed the message:\n%v\n%v", in, out)
	}
	if c.Name() != "proto" {
		t.Fatalf("Name() = %q", c.Name())
	}
}

func TestCodecRejectsForeignTypes(t *testing.T) {
	c := flintpb.Codec{}
	if _, err := c.Marshal("not a message"); err == nil {
		t.Fatal("Marshal of a string succeeded")
	}
	var n int
	if err := c.Unmarshal([]byte{8, 1}, &n); err == nil {
		t.Fatal("Unmarshal into *int succeeded")
	}
	if err := c.Unmarshal([]byte{0xff}, new(flintpb.DriverMessage)); err == nil {
		t.Fatal("Unmarshal of garbage succeeded")
	}
}
