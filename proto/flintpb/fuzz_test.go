package flintpb_test

import (
	"testing"

	"github.com/gogo/protobuf/proto"

	"github.com/flint-mesos/flint/proto/flintpb"
)

// fuzzDecode checks that decoding arbitrary bytes never panics and that a
// successfully decoded message survives a re-encode/decode round trip.
func fuzzDecode(t *testing.T, data []byte, first, second wireMessage) {
	if err := first.Unmarshal(data); err != nil {
		return
	}
	again, err := first.Marshal()
	if err != nil {
		t.Fatalf("Marshal of a decoded %T: %v", first, err)
	}
	if err := second.Unmarshal(again); err != nil {
		t.Fatalf("Unmarshal of a re-encoded %T: %v", first, err)
	}
	if !proto.Equal(first, second) {
		t.Fatalf("%T changed across re-encoding:\n%v\n%v", first, first, second)
	}
}

func FuzzUnmarshalTaskDescription(f *testing.F) {
	seed, err := sampleTaskDescription().Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{})
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{0x62, 0x03, 0x0a, 0x01, 0x61})
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzDecode(t, data, new(flintpb.TaskDescription), new(flintpb.TaskDescription))
	})
}

func FuzzUnmarshalStatusUpdate(f *testing.F) {
	seed, err := sampleStatusUpdate().Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{})
	f.Add([]byte{0x2a, 0x02, 0x12, 0x00})
	f.Add([]byte{0x4a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzDecode(t, data, new(flintpb.StatusUpdate), new(flintpb.StatusUpdate))
	})
}
