package mesoshttp

import (
	"bytes"
	"testing"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

func FuzzDecodeCall(f *testing.F) {
	for _, mt := range []MediaType{Protobuf, JSON} {
		b, _ := Encode(mt, sampleCall())
		f.Add(mt == JSON, b)
	}
	f.Add(true, []byte(`{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n","roles":null}}}`))
	f.Add(false, []byte{0x08, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, isJSON bool, body []byte) {
		mt := Protobuf
		if isJSON {
			mt = JSON
		}
		var c scheduler.Call
		if err := Decode(mt, body, &c); err != nil {
			return
		}
		// Whatever decodes must re-encode and decode to the same call.
		b, err := Encode(Protobuf, &c)
		if err != nil {
			return // e.g. required fields missing in JSON input
		}
		var c2 scheduler.Call
		if err := Decode(Protobuf, b, &c2); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
	})
}

func FuzzRecordReader(f *testing.F) {
	f.Add([]byte("5\nhello0\n"))
	f.Add([]byte("99999999999999999999\nx"))
	f.Add([]byte("4194305\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		rr := NewRecordReader(bytes.NewReader(in), 1<<16)
		total := 0
		for {
			rec, err := rr.ReadRecord()
			if err != nil {
				break
			}
			if len(rec) > 1<<16 {
				t.Fatalf("record of %d bytes over cap", len(rec))
			}
			total += len(rec)
			if total > len(in) {
				t.Fatalf("read more than the input")
			}
		}
	})
}
