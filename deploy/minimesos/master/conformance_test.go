package master_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/deploy/minimesos/minimesostest"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

func forCodecs(t *testing.T, f func(t *testing.T, codec encoding.Codec)) {
	for _, c := range allCodecs {
		t.Run(c.Name, func(t *testing.T) { f(t, c) })
	}
}

func TestSubscribeOffersLaunchUpdateAck(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(1, nil))
		ag := s.Fakes[0]
		c := subscribe(t, s, codec, frameworkInfo("conf"))
		if c.id != "test-0000" {
			t.Fatalf("framework id %q", c.id)
		}
		c.next(scheduler.Event_HEARTBEAT)
		o := c.next(scheduler.Event_OFFERS).Offers.Offers[0]
		if o.AgentID.Value != ag.ID() || !strings.HasPrefix(o.ID.Value, "test-O") || o.FrameworkID.Value != c.id || o.Hostname == "" {
			t.Fatalf("offer %v", o)
		}
		if o.AllocationInfo != nil || o.Resources[0].AllocationInfo != nil {
			t.Fatal("allocation_info not stripped for a non-MULTI_ROLE framework")
		}
		ti := commandTask("t1", o, 1, 128)
		c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(ti)}.WithOffers(o.ID)))
		m, err := ag.WaitFor(5*time.Second, func(m link.MasterMessage) bool { return m.RunTask != nil })
		if err != nil {
			t.Fatal(err)
		}
		if m.RunTask.Task.TaskID.Value != "t1" || m.RunTask.Framework.ID.Value != c.id {
			t.Fatalf("run task %+v", m.RunTask)
		}
		u, err := ag.SendStatus(c.id, "t1", mesos.TASK_RUNNING)
		if err != nil {
			t.Fatal(err)
		}
		st := c.nextUpdate("t1")
		if st.GetState() != mesos.TASK_RUNNING || st.GetAgentID().GetValue() != ag.ID() || !bytes.Equal(st.UUID, u) {
			t.Fatalf("update %v", st)
		}
		c.mustCall(calls.Acknowledge(ag.ID(), "t1", u))
		if _, err := ag.WaitFor(5*time.Second, func(m link.MasterMessage) bool {
			return m.Acknowledge != nil && bytes.Equal(m.Acknowledge.UUID, u)
		}); err != nil {
			t.Fatal(err)
		}
		u2, _ := ag.SendStatus(c.id, "t1", mesos.TASK_FINISHED)
		if st := c.nextUpdate("t1"); st.GetState() != mesos.TASK_FINISHED {
			t.Fatalf("update %v", st)
		}
		c.mustCall(calls.Acknowledge(ag.ID(), "t1", u2))
		waitState(t, s, func(d stateDoc) bool {
			return len(d.Frameworks) == 1 && len(d.Frameworks[0].Tasks) == 0 && len(d.Frameworks[0].CompletedTasks) == 1 &&
				d.Frameworks[0].CompletedTasks[0].State == "TASK_FINISHED"
		})
	})
}

type stateDoc struct {
	ID              string  `json:"id"`
	ActivatedSlaves float64 `json:"activated_slaves"`
	Slaves          []struct {
		ID       string             `json:"id"`
		Hostname string             `json:"hostname"`
		Active   bool               `json:"active"`
		Res      map[string]any     `json:"resources"`
		Used     map[string]float64 `json:"-"`
	} `json:"slaves"`
	Frameworks []struct {
		ID             string                                `json:"id"`
		Active         bool                                  `json:"active"`
		Offers         []struct{ ID string }                 `json:"offers"`
		Tasks          []struct{ ID, State, SlaveID string } `json:"tasks"`
		CompletedTasks []struct {
			ID    string `json:"id"`
			State string `json:"state"`
		} `json:"completed_tasks"`
	} `json:"frameworks"`
	CompletedFrameworks []struct {
		ID string `json:"id"`
	} `json:"completed_frameworks"`
}

func getState(t *testing.T, s *minimesostest.Server) stateDoc {
	t.Helper()
	res, err := http.Get(s.URL + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var d stateDoc
	if err := json.NewDecoder(res.Body).Decode(&d); err != nil {
		t.Fatal(err)
	}
	return d
}

func waitState(t *testing.T, s *minimesostest.Server, ok func(stateDoc) bool) stateDoc {
	t.Helper()
	var d stateDoc
	if !waitfor.Poll(5*time.Second, func() bool { d = getState(t, s); return ok(d) }) {
		t.Fatalf("state never satisfied: %+v", d)
	}
	return d
}

func TestInvalidOffersAndTasks(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(1, nil))
		c := subscribe(t, s, codec, frameworkInfo("inv"))
		o := c.next(scheduler.Event_OFFERS).Offers.Offers[0]
		// Unknown offer → TASK_LOST, REASON_INVALID_OFFERS, no uuid.
		bad := o
		bad.ID.Value = "nope"
		c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(commandTask("x", o, 1, 1))}.WithOffers(bad.ID)))
		st := c.nextUpdate("x")
		if st.GetState() != mesos.TASK_LOST || st.GetReason() != mesos.REASON_INVALID_OFFERS || st.UUID != nil || st.GetSource() != mesos.SOURCE_MASTER {
			t.Fatalf("invalid offer answer %v", st)
		}
		// Too many resources, both command and executor, duplicate id → TASK_ERROR.
		big := commandTask("big", o, 100, 1)
		both := commandTask("both", o, 1, 1)
		both.Executor = &mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "e"}, Command: both.Command}
		ok := commandTask("ok", o, 1, 1)
		dup := commandTask("ok", o, 1, 1)
		c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(big, both, ok, dup)}.WithOffers(o.ID)))
		for _, id := range []string{"big", "both"} {
			if st := c.nextUpdate(id); st.GetState() != mesos.TASK_ERROR || st.GetReason() != mesos.REASON_TASK_INVALID {
				t.Fatalf("%s: %v", id, st)
			}
		}
		if st := c.nextUpdate("ok"); st.GetState() != mesos.TASK_ERROR || !strings.Contains(st.GetMessage(), "duplicate") {
			t.Fatalf("dup: %v", st)
		}
		if _, err := s.Fakes[0].WaitFor(5*time.Second, func(m link.MasterMessage) bool {
			return m.RunTask != nil && m.RunTask.Task.TaskID.Value == "ok"
		}); err != nil {
			t.Fatal(err)
		}
		// The offer is used up now: accepting it again is invalid.
		c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(commandTask("again", o, 1, 1))}.WithOffers(o.ID)))
		if st := c.nextUpdate("again"); st.GetState() != mesos.TASK_LOST {
			t.Fatalf("again: %v", st)
		}
	})
}

func TestPartitionAwareInvalidOfferIsDropped(t *testing.T) {
	s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(1, nil))
	c := subscribe(t, s, allCodecs[0], frameworkInfo("pa", mesos.FrameworkInfo_Capability_PARTITION_AWARE, mesos.FrameworkInfo_Capability_MULTI_ROLE))
	o := c.next(scheduler.Event_OFFERS).Offers.Offers[0]
	if o.AllocationInfo.GetRole() != "*" || o.Resources[0].AllocationInfo.GetRole() != "*" {
		t.Fatalf("MULTI_ROLE offer without allocation_info: %v", o)
	}
	id := o.ID
	id.Value += "x"
	c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(commandTask("d", o, 1, 1))}.WithOffers(id)))
	if st := c.nextUpdate("d"); st.GetState() != mesos.TASK_DROPPED {
		t.Fatalf("%v", st)
	}
}

func TestKillShutdownMessageReconcile(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(1, nil), noReregisterWindow)
		ag := s.Fakes[0]
		c := subscribe(t, s, codec, frameworkInfo("kmr"))
		o := c.next(scheduler.Event_OFFERS).Offers.Offers[0]
		ti := commandTask("t", o, 1, 1)
		ti.Command = nil
		ti.Executor = &mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "ex"}, Command: &mesos.CommandInfo{Value: proto("run")},
			Resources: mesos.Resources{scalar("cpus", 0.5), scalar("mem", 32)}}
		c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(ti)}.WithOffers(o.ID)))
		rt, err := ag.WaitFor(5*time.Second, func(m link.MasterMessage) bool { return m.RunTask != nil })
		if err != nil {
			t.Fatal(err)
		}
		if rt.RunTask.Task.Executor.GetFrameworkID().GetValue() != c.id {
			t.Fatal("master did not fill ExecutorInfo.framework_id")
		}
		ts, running := float64(time.Now().UnixNano())/1e9, "started"
		ag.Send(link.AgentMessage{StatusUpdate: &link.StatusUpdate{FrameworkID: mesos.FrameworkID{Value: c.id},
			Status: mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t"}, State: mesos.TASK_RUNNING.Enum(), Message: &running,
				Source: mesos.SOURCE_EXECUTOR.Enum(), UUID: minimesostest.NewUUID(), Timestamp: &ts, Data: []byte("executor's data")}}})
		c.nextUpdate("t")

		c.mustCall(calls.Kill("t", ag.ID()))
		if _, err := ag.WaitFor(5*time.Second, func(m link.MasterMessage) bool { return m.KillTask != nil && m.KillTask.TaskID.Value == "t" }); err != nil {
			t.Fatal(err)
		}
		c.mustCall(calls.Kill("ghost", ""))
		if st := c.nextUpdate("ghost"); st.GetState() != mesos.TASK_LOST || st.GetReason() != mesos.REASON_RECONCILIATION {
			t.Fatalf("kill unknown: %v", st)
		}
		c.mustCall(calls.Message(ag.ID(), "ex", []byte("hi")))
		if _, err := ag.WaitFor(5*time.Second, func(m link.MasterMessage) bool {
			return m.FrameworkMessage != nil && string(m.FrameworkMessage.Data) == "hi"
		}); err != nil {
			t.Fatal(err)
		}
		ag.Send(link.AgentMessage{ExecutorMessage: &link.ExecutorMessage{FrameworkID: mesos.FrameworkID{Value: c.id}, ExecutorID: mesos.ExecutorID{Value: "ex"}, Data: []byte("yo")}})
		if e := c.next(scheduler.Event_MESSAGE); string(e.Message.Data) != "yo" || e.Message.AgentID.Value != ag.ID() {
			t.Fatalf("message %v", e)
		}
		// Implicit reconciliation: latest state, master source, no uuid,
		// Mesos' message and none of the update's data (Mesos' master builds
		// a new status, createStatusUpdate, from the task's latest state).
		c.mustCall(calls.Reconcile())
		st := c.nextUpdate("t")
		if st.GetState() != mesos.TASK_RUNNING || st.GetReason() != mesos.REASON_RECONCILIATION || st.UUID != nil || st.GetSource() != mesos.SOURCE_MASTER ||
			st.Data != nil || st.GetMessage() != "Reconciliation: Latest task state" || st.GetAgentID().GetValue() != ag.ID() {
			t.Fatalf("implicit: %v", st)
		}
		// Explicit: known, unknown on a registered agent (GONE → LOST), unknown agent (UNKNOWN → LOST).
		c.mustCall(calls.Reconcile(calls.ReconcileTasks(map[string]string{"t": ag.ID(), "u1": ag.ID(), "u2": "nowhere"})))
		got := map[string]mesos.TaskState{}
		for len(got) < 3 {
			e := c.next(scheduler.Event_UPDATE)
			got[e.Update.Status.TaskID.Value] = e.Update.Status.GetState()
		}
		if got["t"] != mesos.TASK_RUNNING || got["u1"] != mesos.TASK_LOST || got["u2"] != mesos.TASK_LOST {
			t.Fatalf("explicit: %v", got)
		}
		c.mustCall(calls.Shutdown("ex", ag.ID()))
		if _, err := ag.WaitFor(5*time.Second, func(m link.MasterMessage) bool { return m.ShutdownExecutor != nil }); err != nil {
			t.Fatal(err)
		}
		ag.Send(link.AgentMessage{ExecutorExited: &link.ExecutorExited{FrameworkID: mesos.FrameworkID{Value: c.id}, ExecutorID: mesos.ExecutorID{Value: "ex"}, Status: 9}})
		if e := c.next(scheduler.Event_FAILURE); e.Failure.GetExecutorID().GetValue() != "ex" || e.Failure.GetStatus() != 9 || e.Failure.GetAgentID().GetValue() != ag.ID() {
			t.Fatalf("failure %v", e)
		}
		for _, call := range []*scheduler.Call{calls.Decline(), calls.Revive(), calls.Suppress(), calls.ReviveWith([]string{"*"}),
			calls.Request(), calls.AcceptInverseOffers(), calls.DeclineInverseOffers()} {
			c.mustCall(call)
		}
	})
}

func TestPartitionAwareExplicitReconcile(t *testing.T) {
	s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(2, nil), noReregisterWindow)
	c := subscribe(t, s, allCodecs[1], frameworkInfo("pa", mesos.FrameworkInfo_Capability_PARTITION_AWARE))
	gone, unreach := s.Fakes[0].ID(), s.Fakes[1].ID()
	if err := s.Faults().RemoveAgent(gone, true); err != nil {
		t.Fatal(err)
	}
	if err := s.Faults().RemoveAgent(unreach, false); err != nil {
		t.Fatal(err)
	}
	c.mustCall(calls.Reconcile(calls.ReconcileTasks(map[string]string{"a": gone, "b": unreach, "c": "x"})))
	got := map[string]mesos.TaskState{}
	for len(got) < 3 {
		e := c.next(scheduler.Event_UPDATE)
		got[e.Update.Status.TaskID.Value] = e.Update.Status.GetState()
	}
	if got["a"] != mesos.TASK_GONE_BY_OPERATOR || got["b"] != mesos.TASK_UNREACHABLE || got["c"] != mesos.TASK_UNKNOWN {
		t.Fatalf("%v", got)
	}
}

func proto[T any](v T) *T { return &v }

func TestTeardownShutsDownFramework(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(1, nil))
		c := subscribe(t, s, codec, frameworkInfo("td"))
		o := c.next(scheduler.Event_OFFERS).Offers.Offers[0]
		c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(commandTask("t", o, 1, 1))}.WithOffers(o.ID)))
		s.Fakes[0].WaitFor(5*time.Second, func(m link.MasterMessage) bool { return m.RunTask != nil })
		c.mustCall(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
		if _, err := s.Fakes[0].WaitFor(5*time.Second, func(m link.MasterMessage) bool {
			return m.ShutdownFramework != nil && m.ShutdownFramework.FrameworkID.Value == c.id
		}); err != nil {
			t.Fatal(err)
		}
		d := waitState(t, s, func(d stateDoc) bool { return len(d.Frameworks) == 0 && len(d.CompletedFrameworks) == 1 })
		_ = d
	})
}

func TestAgentDisconnectLosesNonCheckpointingTasks(t *testing.T) {
	s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(1, nil))
	ag := s.Fakes[0]
	c := subscribe(t, s, allCodecs[0], frameworkInfo("nc"))
	o := c.next(scheduler.Event_OFFERS).Offers.Offers[0]
	c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(commandTask("t", o, 1, 1))}.WithOffers(o.ID)))
	ag.WaitFor(5*time.Second, func(m link.MasterMessage) bool { return m.RunTask != nil })
	ag.Disconnect()
	if st := c.nextUpdate("t"); st.GetState() != mesos.TASK_LOST || st.GetReason() != mesos.REASON_AGENT_DISCONNECTED {
		t.Fatalf("%v", st)
	}
	waitState(t, s, func(d stateDoc) bool { return len(d.Slaves) == 1 && !d.Slaves[0].Active })
	if err := ag.Register(s.Master); err != nil {
		t.Fatal(err)
	}
	waitState(t, s, func(d stateDoc) bool { return len(d.Slaves) == 1 && d.Slaves[0].Active })
}

func TestMasterRestartRebuildsFromAgents(t *testing.T) {
	s := minimesostest.NewServer(t)
	ag := minimesostest.NewFakeAgent("h", minimesostest.DefaultResources())
	ag.Info.ID = &mesos.AgentID{Value: "old-S3"}
	fid := mesos.FrameworkID{Value: "old-0000"}
	task := mesos.Task{Name: "t", TaskID: mesos.TaskID{Value: "t"}, FrameworkID: fid, AgentID: mesos.AgentID{Value: "old-S3"},
		State: mesos.TASK_RUNNING.Enum(), Resources: mesos.Resources{scalar("cpus", 1)}}
	err := ag.RegisterWith(s.Master, link.Registration{Frameworks: []mesos.FrameworkInfo{{ID: &fid, Name: "fw", User: "u"}}, Tasks: []mesos.Task{task}})
	if err != nil {
		t.Fatal(err)
	}
	defer ag.Stop()
	if ag.ID() != "old-S3" {
		t.Fatalf("agent id %s", ag.ID())
	}
	fi := frameworkInfo("fw")
	fi.ID = &fid
	c := subscribe(t, s, allCodecs[1], fi)
	if c.id != "old-0000" {
		t.Fatal(c.id)
	}
	c.mustCall(calls.Reconcile())
	if st := c.nextUpdate("t"); st.GetState() != mesos.TASK_RUNNING || st.GetAgentID().GetValue() != "old-S3" {
		t.Fatalf("%v", st)
	}
}

// post sends a raw call and returns the response.
func post(t *testing.T, url, ct, accept string, body []byte, hdr map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func TestHTTPAnswers(t *testing.T) {
	s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(1, nil))
	url := s.SchedulerURL()
	c := subscribe(t, s, allCodecs[1], frameworkInfo("raw"))
	js := func(v string) []byte { return []byte(v) }
	sub := js(`{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n"}}}`)
	revive := js(`{"type":"REVIVE","framework_id":{"value":"` + c.id + `"}}`)
	cases := []struct {
		name, method, ct, accept string
		body                     []byte
		hdr                      map[string]string
		code                     int
	}{
		{"GET", http.MethodGet, "", "", nil, nil, 405},
		{"no content type", "", "", "", revive, nil, 400},
		{"bad media", "", "text/plain", "", revive, nil, 415},
		{"garbage", "", "application/json", "", js("{"), nil, 400},
		{"no framework id", "", "application/json", "", js(`{"type":"REVIVE"}`), nil, 400},
		{"bad uuid", "", "application/json", "", js(`{"type":"ACKNOWLEDGE","framework_id":{"value":"` + c.id + `"},"acknowledge":{"agent_id":{"value":"a"},"task_id":{"value":"t"},"uuid":"AAE="}}`), nil, 400},
		{"not acceptable", "", "application/json", "text/html", sub, nil, 406},
		{"subscribe with stream id", "", "application/json", "", sub, map[string]string{"Mesos-Stream-Id": "x"}, 400},
		{"unknown framework", "", "application/json", "", js(`{"type":"REVIVE","framework_id":{"value":"nope"}}`), nil, 400},
		{"missing stream id", "", "application/json", "", revive, nil, 400},
		{"wrong stream id", "", "application/json", "", revive, map[string]string{"Mesos-Stream-Id": "wrong"}, 400},
	}
	for _, tc := range cases {
		method := tc.method
		if method == "" {
			method = http.MethodPost
		}
		req, _ := http.NewRequest(method, url, bytes.NewReader(tc.body))
		if tc.ct != "" {
			req.Header.Set("Content-Type", tc.ct)
		}
		if tc.accept != "" {
			req.Header.Set("Accept", tc.accept)
		}
		for k, v := range tc.hdr {
			req.Header.Set(k, v)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.code {
			t.Errorf("%s: %d %q, want %d", tc.name, res.StatusCode, b, tc.code)
		}
	}
	// A subscribed stream's raw answers: 202 with an empty body.
	streamID := subscribeRaw(t, url)
	res := post(t, url, "application/json", "", js(`{"type":"REVIVE","framework_id":{"value":"test-0001"}}`), map[string]string{"Mesos-Stream-Id": streamID})
	if b, _ := io.ReadAll(res.Body); res.StatusCode != 202 || len(b) != 0 {
		t.Fatalf("202: %d %q", res.StatusCode, b)
	}
	res = post(t, url, "application/json", "", js(`{"type":"UNKNOWN","framework_id":{"value":"test-0001"}}`), map[string]string{"Mesos-Stream-Id": streamID})
	if res.StatusCode != 501 {
		t.Fatalf("UNKNOWN: %d", res.StatusCode)
	}
	upd := js(`{"type":"UPDATE_FRAMEWORK","framework_id":{"value":"test-0001"},"update_framework":{"framework_info":{"id":{"value":"test-0001"},"user":"u","name":"renamed"}}}`)
	res = post(t, url, "application/json", "", upd, map[string]string{"Mesos-Stream-Id": streamID})
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/json" || res.Header.Get("Content-Length") != "0" {
		t.Fatalf("UPDATE_FRAMEWORK: %d %v", res.StatusCode, res.Header)
	}
	// A disconnected (failover_timeout>0) framework is known but not subscribed: 403.
	fi := frameworkInfo("dc")
	fi.FailoverTimeout = proto(60.0)
	dc := subscribe(t, s, allCodecs[0], fi)
	if err := s.Faults().DropFrameworkStream(dc.id); err != nil {
		t.Fatal(err)
	}
	res = post(t, url, "application/json", "", js(`{"type":"REVIVE","framework_id":{"value":"`+dc.id+`"}}`), map[string]string{"Mesos-Stream-Id": "x"})
	if res.StatusCode != 403 {
		t.Fatalf("403: %d", res.StatusCode)
	}
	// In-stream ERROR for an invalid FrameworkInfo: 200 then ERROR.
	res = post(t, url, "application/json", "", js(`{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n","role":"/bad"}}}`), nil)
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.Contains(string(b), `"ERROR"`) {
		t.Fatalf("invalid framework info: %d %q", res.StatusCode, b)
	}
}

// subscribeRaw subscribes by hand and checks the stream's headers.
func subscribeRaw(t *testing.T, url string) string {
	res := post(t, url, "application/json", "application/json", []byte(`{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"raw2"}}}`), nil)
	if res.StatusCode != 200 || res.ContentLength != -1 || res.Header.Get("Content-Type") != "application/json" || res.Header.Get("Mesos-Stream-Id") == "" {
		t.Fatalf("subscribe headers: %d %v len=%d", res.StatusCode, res.Header, res.ContentLength)
	}
	return res.Header.Get("Mesos-Stream-Id")
}

func TestAuthentication(t *testing.T) {
	s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(1, nil), minimesostest.WithConfig(func(c *master.Config) {
		c.Credentials = map[string]string{"p": "s"}
	}))
	res := post(t, s.SchedulerURL(), "application/json", "", []byte(`{"type":"SUBSCRIBE"}`), nil)
	if res.StatusCode != 401 || res.Header.Get("WWW-Authenticate") != `Basic realm="mesos-master-scheduler"` {
		t.Fatalf("%d %v", res.StatusCode, res.Header)
	}
	fi := frameworkInfo("auth")
	fi.Principal = proto("p")
	c := subscribe(t, s, allCodecs[0], fi, httpcli.BasicAuth("p", "s"))
	c.next(scheduler.Event_OFFERS)
	for _, tc := range []struct {
		user, pass, principal string
		code                  int
	}{
		{"p", "s", "other", 400}, {"p", "wrong", "p", 401}, {"nobody", "s", "p", 401},
	} {
		req, _ := http.NewRequest(http.MethodPost, s.SchedulerURL(), strings.NewReader(
			`{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n","principal":"`+tc.principal+`"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth(tc.user, tc.pass)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.code {
			t.Errorf("%+v: got %d", tc, res.StatusCode)
		}
	}
}

// noReregisterWindow ends the window after a master start in which unknown
// agents may still re-register (their tasks get no reconciliation answer),
// so tests can reconcile tasks on unknown agents at once.
var noReregisterWindow = minimesostest.WithConfig(func(c *master.Config) { c.AgentReregisterTimeout = time.Nanosecond })

// After a master (re)start, a task on an agent the master does not know gets
// no reconciliation answer while the agent may still re-register, then
// TASK_LOST (TASK_UNKNOWN for partition-aware frameworks).
func TestReconcileUnknownAgentWaitsForReregistration(t *testing.T) {
	clock := minimesostest.NewFakeClock(time.Unix(1_700_000_000, 0))
	s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(1, nil), minimesostest.WithConfig(func(c *master.Config) {
		c.Clock = clock
		c.AgentPingInterval = time.Hour
		c.AgentReregisterTimeout = time.Minute
	}))
	c := subscribe(t, s, allCodecs[0], frameworkInfo("rw"))
	known := s.Fakes[0].ID()
	// Within the window: only the task on the known agent is answered.
	c.mustCall(calls.Reconcile(calls.ReconcileTasks(map[string]string{"on-unknown": "S-missing", "on-known": known})))
	u := c.next(scheduler.Event_UPDATE).Update.Status
	if u.TaskID.Value != "on-known" || u.GetState() != mesos.TASK_LOST {
		t.Fatalf("first answer %s %s, want on-known TASK_LOST (agent registered, task unknown)", u.TaskID.Value, u.GetState())
	}
	c.mustCall(calls.Reconcile(calls.ReconcileTasks(map[string]string{"on-known": known})))
	if u := c.next(scheduler.Event_UPDATE).Update.Status; u.TaskID.Value != "on-known" {
		t.Fatalf("the task on the unknown agent was answered within the window: %v", u)
	}
	clock.Advance(time.Minute)
	c.mustCall(calls.Reconcile(calls.ReconcileTasks(map[string]string{"on-unknown": "S-missing"})))
	if u := c.next(scheduler.Event_UPDATE).Update.Status; u.TaskID.Value != "on-unknown" || u.GetState() != mesos.TASK_LOST {
		t.Fatalf("after the window: %s %s, want on-unknown TASK_LOST", u.TaskID.Value, u.GetState())
	}
}
