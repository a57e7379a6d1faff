package mesosconn

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// A Mesos 1.12 master's SUBSCRIBED names a capability mesos-go v0.0.11
// does not know; plain mesos-go JSON refuses the event, the Conn's JSON
// codec keeps the value as an unknown number, as protobuf does.
func TestJSONToleratesUnknownEnums(t *testing.T) {
	sub := []byte(`{"type":"SUBSCRIBED","subscribed":{"framework_id":{"value":"f"},"heartbeat_interval_seconds":15,` +
		`"master_info":{"id":"m","ip":16777343,"port":5050,"capabilities":[{"type":"AGENT_UPDATE"},{"type":"QUOTA_V2"},{"type":"QUOTA_V3"}]}}}`)
	var plain scheduler.Event
	if err := json.Unmarshal(sub, &plain); err == nil || !strings.Contains(err.Error(), `"QUOTA_V2"`) {
		t.Fatalf("plain mesos-go JSON: %v; the test needs a value it refuses", err)
	}
	var e scheduler.Event
	if err := unmarshalTolerant(sub, &e); err != nil {
		t.Fatal(err)
	}
	caps := e.GetSubscribed().GetMasterInfo().GetCapabilities()
	if e.GetSubscribed().GetFrameworkID().GetValue() != "f" || len(caps) != 3 ||
		caps[0].GetType() != mesos.MasterInfo_Capability_AGENT_UPDATE || caps[1].GetType() != unknownEnum || caps[2].GetType() != unknownEnum {
		t.Fatalf("decoded %+v", e.GetSubscribed())
	}
	// A task state reason from a newer master: the update still arrives,
	// its known fields intact; a string field with the same text is kept.
	upd := []byte(`{"type":"UPDATE","update":{"status":{"task_id":{"value":"REASON_FROM_THE_FUTURE"},"state":"TASK_FAILED","reason":"REASON_FROM_THE_FUTURE","source":"SOURCE_AGENT"}}}`)
	if err := unmarshalTolerant(upd, &e); err != nil {
		t.Fatal(err)
	}
	st := e.GetUpdate().GetStatus()
	if st.GetState() != mesos.TASK_FAILED || st.GetSource() != mesos.SOURCE_AGENT || int32(st.GetReason()) != unknownEnum || st.TaskID.Value != "REASON_FROM_THE_FUTURE" {
		t.Fatalf("decoded %+v", st)
	}
	// Anything else stays an error.
	if err := unmarshalTolerant([]byte(`{"type":"SUBSCRIBED","subscribed":{"framework_id":7}}`), &e); err == nil {
		t.Fatal("a type mismatch was tolerated")
	}
}

// With flint.mesos.codec=json the Conn registers with a master whose
// MasterInfo carries QUOTA_V2.
func TestJSONCodecWithANewerMaster(t *testing.T) {
	clock := newFakeClock()
	fm := newFakeMaster(t, clock, "m1")
	fm.editJSON = func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"capabilities":null`), []byte(`"capabilities":[{"type":"QUOTA_V2"}]`), 1)
	}
	cfg := testConfig(fm, clock)
	cfg.Codec = JSON
	rec := &recorder{}
	c := start(t, cfg, rec)
	m := c.Master()
	caps := m.GetCapabilities()
	if m.ID != "m1" || len(caps) != 1 || caps[0].GetType() != unknownEnum {
		t.Fatalf("MasterInfo %+v", m)
	}
}

func FuzzUnmarshalTolerant(f *testing.F) {
	f.Add([]byte(`{"type":"SUBSCRIBED","subscribed":{"master_info":{"id":"m","capabilities":[{"type":"QUOTA_V2"}]}}}`))
	f.Add([]byte(`{"type":"UPDATE","update":{"status":{"task_id":{"value":"t"},"state":"TASK_NEW","reason":"R"}}}`))
	f.Add([]byte(`{"type":"X"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var e scheduler.Event
		if err := unmarshalTolerant(data, &e); err == nil {
			if _, err := json.Marshal(&e); err != nil {
				t.Fatalf("decoded event does not encode: %v", err)
			}
		}
	})
}
