package flintpb_test

import (
	"reflect"
	"testing"

	"github.com/gogo/protobuf/proto"

	"github.com/flint-mesos/flint/proto/flintpb"
)

// wireMessage is what every gogofaster message implements.
type wireMessage interface {
	proto.Message
	Marshal() ([]byte, error)
	Unmarshal([]byte) error
	Size() int
}

func sampleTaskDescription() *flintpb.TaskDescription {
	return &flintpb.TaskDescription{
		TaskId: 1<<40 + 7, Attempt: 2, Index: 3, TaskSetId: "0.1",
		JobId: 5, StageId: 1, StageAttempt: 1, Function: "wordcount.map",
		Codec: "gob", Input: []byte{0, 1, 2, 255},
		Files: []*flintpb.FileRef{
			{Name: "flint", Uri: "http://driver:1234/files/flint", Sha256: "ab", Size_: 42, Executable: true},
			{Name: "data.tgz", Uri: "file:///tmp/data.tgz", Extract: true},
		},
		Properties:         map[string]string{"flint.job.description": "count", "": "empty key"},
		Cpus:               2,
		ExecutorId:         "exec-1",
		Speculative:        true,
		LaunchTimeUnixNano: -1,
	}
}

func sampleStatusUpdate() *flintpb.StatusUpdate {
	return &flintpb.StatusUpdate{
		TaskId: 7, Attempt: 1, ExecutorId: "exec-1", State: flintpb.TaskState_TASK_FINISHED,
		Result: &flintpb.TaskResult{Value: &flintpb.TaskResult_Indirect{Indirect: &flintpb.IndirectResult{
			BlockId: "result-7-1", Size_: 3 << 20, ExecutorId: "exec-1", Sha256: "cafe",
		}}},
		Failure: &flintpb.TaskFailure{Kind: flintpb.FailureKind_PANIC, Message: "boom", Stack: "goroutine 1"},
		Metrics: &flintpb.TaskMetrics{
			LaunchTimeUnixNano: 1, StartTimeUnixNano: 2, FinishTimeUnixNano: 3, RunTimeNanos: 4,
			DecodeNanos: 5, EncodeNanos: 6, ResultSize: 7, InputSize: 8,
		},
		TimestampUnixNano: 1700000000000000000,
		Uuid:              []byte("0123456789abcdef"),
	}
}

func allMessages() map[string]wireMessage {
	return map[string]wireMessage{
		"FileRef":         sampleTaskDescription().Files[0],
		"TaskDescription": sampleTaskDescription(),
		"TaskFailure":     &flintpb.TaskFailure{Kind: flintpb.FailureKind_LAUNCH_FAILED, Message: "m", Stack: "s"},
		"TaskMetrics":     sampleStatusUpdate().Metrics,
		"IndirectResult":  &flintpb.IndirectResult{BlockId: "b", Size_: 1, ExecutorId: "e", Sha256: "00"},
		"TaskResultInline": &flintpb.TaskResult{Value: &flintpb.TaskResult_Inline{
			Inline: []byte("result"),
		}},
		"StatusUpdate":    sampleStatusUpdate(),
		"StatusUpdateAck": &flintpb.StatusUpdateAck{TaskId: 9, Uuid: []byte("0123456789abcdef")},
		"RegisterExecutor": &flintpb.RegisterExecutor{
			ExecutorId: "exec-1", Host: "h", Rack: "r", AgentId: "a", Cores: 8, Token: "t",
			Version: "v0.1.0", Attributes: map[string]string{"zone": "a"}, Pid: 4242,
		},
		"RegisteredExecutor": &flintpb.RegisteredExecutor{
			DriverId: "d", HeartbeatIntervalNanos: 1e10, Settings: &flintpb.ExecutorSettings{Version: 3, TaskCpus: 1,
				Shuffle: &flintpb.ShuffleSettings{AppId: "x", Codec: flintpb.ShuffleCodec_SHUFFLE_CODEC_ZSTD, RetryWaitNanos: 5}, JobSettings: map[string]string{"app.name": "x"}, JobSecrets: map[string]string{"": "empty key"}},
		},
		"Heartbeat": &flintpb.Heartbeat{
			ExecutorId: "e", TimestampUnixNano: 3, RunningTaskIds: []uint64{1, 1 << 63, 0}, FreeCores: 3,
		},
		"KillTask":      &flintpb.KillTask{TaskId: 1, Reason: "speculation", Interrupt: true},
		"StopExecutor":  &flintpb.StopExecutor{Reason: "done"},
		"FetchResult":   &flintpb.FetchResult{BlockId: "b"},
		"ResultBlock":   &flintpb.ResultBlock{BlockId: "b", Data: []byte("d"), Error: "e"},
		"ReleaseResult": &flintpb.ReleaseResult{BlockId: "b"},
		"DriverMessage": &flintpb.DriverMessage{Message: &flintpb.DriverMessage_LaunchTask{
			LaunchTask: sampleTaskDescription(),
		}},
		"ExecutorMessage": &flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_StatusUpdate{
			StatusUpdate: sampleStatusUpdate(),
		}},
	}
}

func TestRoundTrip(t *testing.T) {
	for name, msg := range allMessages() {
		t.Run(name, func(t *testing.T) {
			data, err := msg.Marshal()
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if len(data) != msg.Size() {
				t.Errorf("len(Marshal()) = %d, Size() = %d", len(data), msg.Size())
			}
			if len(data) == 0 {
				t.Fatal("populated message marshalled to zero bytes")
			}
			got := reflect.New(reflect.TypeOf(msg).Elem()).Interface().(wireMessage)
			if err := got.Unmarshal(data); err != nil {
				t.Fatalf("Unmarshal: %v", err)
			}
			if !reflect.DeepEqual(got, msg) {
				t.Errorf("round trip mismatch:\n got %v\nwant %v", got, msg)
			}
			if !proto.Equal(got, msg) {
				t.Errorf("proto.Equal false after round trip")
			}
		})
	}
}

func TestEveryDriverAndExecutorMessageRoundTrips(t *testing.T) {
	driver := []flintpb.DriverMessage{
		{Message: &flintpb.DriverMessage_Registered{Registered: &flintpb.RegisteredExecutor{DriverId: "d"}}},
		{Message: &flintpb.DriverMessage_LaunchTask{LaunchTask: &flintpb.TaskDescription{TaskId: 1}}},
		{Message: &flintpb.DriverMessage_KillTask{KillTask: &flintpb.KillTask{TaskId: 1}}},
		{Message: &flintpb.DriverMessage_StopExecutor{StopExecutor: &flintpb.StopExecutor{Reason: "r"}}},
		{Message: &flintpb.DriverMessage_FetchResult{FetchResult: &flintpb.FetchResult{BlockId: "b"}}},
		{Message: &flintpb.DriverMessage_ReleaseResult{ReleaseResult: &flintpb.ReleaseResult{BlockId: "b"}}},
		{Message: &flintpb.DriverMessage_Ack{Ack: &flintpb.StatusUpdateAck{TaskId: 1}}},
	}
	for i := range driver {
		var got flintpb.DriverMessage
		roundTrip(t, &driver[i], &got)
		if reflect.TypeOf(got.Message) != reflect.TypeOf(driver[i].Message) {
			t.Errorf("DriverMessage %d: oneof case %T, want %T", i, got.Message, driver[i].Message)
		}
	}
	executor := []flintpb.ExecutorMessage{
		{Message: &flintpb.ExecutorMessage_Register{Register: &flintpb.RegisterExecutor{ExecutorId: "e"}}},
		{Message: &flintpb.ExecutorMessage_StatusUpdate{StatusUpdate: &flintpb.StatusUpdate{TaskId: 1}}},
		{Message: &flintpb.ExecutorMessage_Heartbeat{Heartbeat: &flintpb.Heartbeat{ExecutorId: "e"}}},
		{Message: &flintpb.ExecutorMessage_ResultBlock{ResultBlock: &flintpb.ResultBlock{BlockId: "b"}}},
	}
	for i := range executor {
		var got flintpb.ExecutorMessage
		roundTrip(t, &executor[i], &got)
		if reflect.TypeOf(got.Message) != reflect.TypeOf(executor[i].Message) {
			t.Errorf("ExecutorMessage %d: oneof case %T, want %T", i, got.Message, executor[i].Message)
		}
	}
}

func roundTrip(t *testing.T, in, out wireMessage) {
	t.Helper()
	data, err := in.Marshal()
	if err != nil {
		t.Fatalf("Marshal %T: %v", in, err)
	}
	if err := out.Unmarshal(data); err != nil {
		t.Fatalf("Unmarshal %T: %v", out, err)
	}
	if !proto.Equal(in, out) {
		t.Errorf("%T round trip mismatch:\n got %v\nwant %v", in, out, in)
	}
}

func TestZeroValueMarshalsEmpty(t *testing.T) {
	for name, msg := range allMessages() {
		zero := reflect.New(reflect.TypeOf(msg).Elem()).Interface().(wireMessage)
		data, err := zero.Marshal()
		if err != nil || len(data) != 0 {
			t.Errorf("%s: zero value marshals to %x, %v; want no bytes", name, data, err)
		}
	}
}

func TestUnmarshalRejectsTruncated(t *testing.T) {
	data, err := sampleStatusUpdate().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var got flintpb.StatusUpdate
	if err := got.Unmarshal(data[:len(data)-1]); err == nil {
		t.Error("Unmarshal of a truncated StatusUpdate succeeded")
	}
}

func TestEnumNames(t *testing.T) {
	if got := flintpb.TaskState_TASK_KILLED.String(); got != "TASK_KILLED" {
		t.Errorf("TaskState_TASK_KILLED.String() = %q", got)
	}
	if got := flintpb.FailureKind_RESULT_TOO_LARGE.String(); got != "RESULT_TOO_LARGE" {
		t.Errorf("FailureKind_RESULT_TOO_LARGE.String() = %q", got)
	}
}
