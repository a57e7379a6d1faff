package link

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeMaster records what agents send and keeps their connections.
type fakeMaster struct {
	mu           sync.Mutex
	conns        map[string]Agent
	msgs         []AgentMessage
	disconnected []string
	regs         []Registration
}

func newFakeMaster() *fakeMaster { return &fakeMaster{conns: map[string]Agent{}} }

func (f *fakeMaster) RegisterAgent(_ context.Context, r Registration, to Agent) (Registered, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	id := "M-S0"
	if r.AgentInfo.ID != nil {
		id = r.AgentInfo.ID.Value
		if id == "refuse" {
			return Registered{}, errors.New("agent refused")
		}
	}
	f.regs = append(f.regs, r)
	f.conns[id] = to
	return Registered{AgentID: mesos.AgentID{Value: id}, MasterInfo: mesos.MasterInfo{ID: "M", IP: 1, Hostname: func() *string { s := "m"; return &s }()}, PingInterval: time.Second}, nil
}

func (f *fakeMaster) FromAgent(_ context.Context, id string, m AgentMessage) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.conns[id]; !ok {
		return ErrUnknownAgent
	}
	f.msgs = append(f.msgs, m)
	return nil
}

func (f *fakeMaster) AgentDisconnected(id string, to Agent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conns[id] == to {
		delete(f.conns, id)
		f.disconnected = append(f.disconnected, id)
	}
}

func (f *fakeMaster) conn(id string) Agent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.conns[id]
}

func quietLogger() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

func runTask() MasterMessage {
	cpus := 0.5
	return MasterMessage{RunTask: &RunTask{
		Framework: mesos.FrameworkInfo{ID: &mesos.FrameworkID{Value: "M-0000"}, Name: "fw", User: "nobody", Roles: []string{"*"}},
		Task: &mesos.TaskInfo{Name: "t", TaskID: mesos.TaskID{Value: "t1"}, AgentID: mesos.AgentID{Value: "M-S0"},
			Resources: []mesos.Resource{{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: cpus}}},
			Command:   &mesos.CommandInfo{Value: func() *string { s := "echo hi"; return &s }()}, Data: []byte{0, 1, 2}},
	}}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitfor.True(t, 5*time.Second, what, cond)
}

func TestHTTPTransportCarriesBothDirections(t *testing.T) {
	fm := newFakeMaster()
	srv := httptest.NewServer(Handler(fm, HandlerConfig{Secret: "s3cret", Logger: quietLogger()}))
	defer srv.Close()
	c := Dial(srv.URL, ClientConfig{Secret: "s3cret", Logger: quietLogger()})
	defer c.Close()

	var mu sync.Mutex
	var got []MasterMessage
	to := AgentFunc(func(m MasterMessage) error { mu.Lock(); got = append(got, m); mu.Unlock(); return nil })
	ack, err := c.RegisterAgent(context.Background(), Registration{AgentInfo: mesos.AgentInfo{Hostname: "h1"}}, to)
	if err != nil {
		t.Fatal(err)
	}
	if ack.AgentID.Value != "M-S0" || ack.PingInterval != time.Second {
		t.Fatalf("Registered = %+v", ack)
	}
	want := []MasterMessage{runTask(), {Ping: &Ping{Seq: 7}}, {Acknowledge: &Acknowledge{TaskID: mesos.TaskID{Value: "t1"}, UUID: []byte("0123456789abcdef")}}}
	for _, m := range want {
		if err := fm.conn("M-S0").Deliver(m); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "three messages", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 3 })
	mu.Lock()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("agent got %+v\nwant %+v", got, want)
	}
	mu.Unlock()

	up := AgentMessage{StatusUpdate: &StatusUpdate{FrameworkID: mesos.FrameworkID{Value: "M-0000"},
		Status: mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t1"}, State: mesos.TASK_RUNNING.Enum(), UUID: []byte("0123456789abcdef")}}}
	if err := c.FromAgent(context.Background(), "M-S0", up); err != nil {
		t.Fatal(err)
	}
	if err := c.FromAgent(context.Background(), "nope", up); !errors.Is(err, ErrUnknownAgent) {
		t.Fatalf("unknown agent: %v, want ErrUnknownAgent", err)
	}
	fm.mu.Lock()
	if len(fm.msgs) != 1 || !reflect.DeepEqual(fm.msgs[0], up) {
		t.Fatalf("master got %+v, want %+v", fm.msgs, up)
	}
	fm.mu.Unlock()
}

func TestHTTPTransportRejectsBadSecretAndRegistration(t *testing.T) {
	fm := newFakeMaster()
	srv := httptest.NewServer(Handler(fm, HandlerConfig{Secret: "right", Logger: quietLogger()}))
	defer srv.Close()
	c := Dial(srv.URL, ClientConfig{Secret: "wrong", Logger: quietLogger()})
	defer c.Close()
	nop := AgentFunc(func(MasterMessage) error { return nil })
	if _, err := c.RegisterAgent(context.Background(), Registration{}, nop); err == nil || !contains(err.Error(), "401") {
		t.Fatalf("bad secret: %v, want a 401", err)
	}
	c2 := Dial(srv.URL, ClientConfig{Secret: "right", Logger: quietLogger()})
	defer c2.Close()
	_, err := c2.RegisterAgent(context.Background(), Registration{AgentInfo: mesos.AgentInfo{ID: &mesos.AgentID{Value: "refuse"}}}, nop)
	if err == nil || !contains(err.Error(), "agent refused") {
		t.Fatalf("refused registration: %v", err)
	}
	if err := c2.FromAgent(context.Background(), "M-S0", AgentMessage{Pong: &Pong{}}); !errors.Is(err, ErrClosed) {
		t.Fatalf("FromAgent before registering: %v, want ErrClosed", err)
	}
}

func TestClosingTheClientDisconnectsTheAgent(t *testing.T) {
	fm := newFakeMaster()
	srv := httptest.NewServer(Handler(fm, HandlerConfig{Logger: quietLogger()}))
	defer srv.Close()
	c := Dial(srv.URL, ClientConfig{Logger: quietLogger()})
	nop := AgentFunc(func(MasterMessage) error { return nil })
	if _, err := c.RegisterAgent(context.Background(), Registration{}, nop); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the master to see the disconnect", func() bool {
		fm.mu.Lock()
		defer fm.mu.Unlock()
		return len(fm.disconnected) == 1
	})
	if c.Connected() {
		t.Fatal("client still connected after Close")
	}
}

func TestMessagesSurviveJSON(t *testing.T) {
	in := runTask()
	b, err := json.Marshal(&in)
	if err != nil {
		t.Fatal(err)
	}
	var out MasterMessage
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip changed the message:\n%s", b)
	}
}

func FuzzHandlerMessage(f *testing.F) {
	f.Add([]byte(`{"pong":{"seq":1}}`))
	f.Add([]byte(`{"status_update":{"status":{"state":"TASK_RUNNING"}}}`))
	f.Add([]byte(`{`))
	fm := newFakeMaster()
	fm.conns["a"] = AgentFunc(func(MasterMessage) error { return nil })
	h := Handler(fm, HandlerConfig{Logger: quietLogger()})
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", MessagePath, bytesReader(body))
		req.Header.Set(AgentIDHeader, "a")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 202 && rec.Code != 400 {
			t.Fatalf("status %d for %q", rec.Code, body)
		}
	})
}
