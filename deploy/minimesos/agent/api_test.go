package agent

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gogo/protobuf/proto"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/executor"

	"github.com/flint-mesos/flint/deploy/minimesos/mesoshttp"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
	"github.com/flint-mesos/flint/internal/uuid"
)

func post(t *testing.T, ta *testAgent, ctype, accept string, body []byte) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+ta.cfg.Endpoint+"/api/v1/executor", bytes.NewReader(body))
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func pb(t *testing.T, c *executor.Call) []byte {
	b, err := proto.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func code(t *testing.T, resp *http.Response) int {
	t.Helper()
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func TestExecutorAPIValidation(t *testing.T) {
	m := newFakeMaster()
	ta := startAgent(t, m, fastConfig(t, t.TempDir()))
	fw := fwInfo("fw", true)
	// The executor process never subscribes; the test speaks for it.
	runTask(t, ta, fw, executorTask("mine", "run", executorInfo("raw", "TESTEXEC_MODE", "nosubscribe")))
	waitfor.True(t, 10*time.Second, "the executor to start", func() bool {
		ta.mu.Lock()
		defer ta.mu.Unlock()
		return ta.frameworks["fw"] != nil && ta.frameworks["fw"].executors["raw"] != nil && ta.frameworks["fw"].executors["raw"].proc != nil
	})
	ids := func(c executor.Call) *executor.Call {
		c.FrameworkID, c.ExecutorID = mesos.FrameworkID{Value: "fw"}, mesos.ExecutorID{Value: "raw"}
		return &c
	}
	uid := uuid.New()
	update := func(task string, st mesos.TaskState, src mesos.TaskStatus_Source, u []byte) *executor.Call {
		return ids(executor.Call{Type: executor.Call_UPDATE, Update: &executor.Call_Update{Status: mesos.TaskStatus{
			TaskID: mesos.TaskID{Value: task}, State: st.Enum(), Source: src.Enum(), UUID: u}}})
	}
	good := update("mine", mesos.TASK_RUNNING, mesos.SOURCE_EXECUTOR, uid)
	const PB = "application/x-protobuf"

	req, _ := http.NewRequest(http.MethodGet, "http://"+ta.cfg.Endpoint+"/api/v1/executor", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || code(t, resp) != 405 {
		t.Fatalf("GET: %v %v", resp.StatusCode, err)
	}
	for name, c := range map[string]struct {
		ctype, accept string
		body          []byte
		want          int
	}{
		"no content type":   {"", "", pb(t, good), 400},
		"other media type":  {"text/plain", "", pb(t, good), 415},
		"garbage":           {PB, "", []byte{0xff, 0xff, 0xff}, 400},
		"bad json":          {"application/json", "", []byte("{"), 400},
		"unknown framework": {PB, "", pb(t, &executor.Call{Type: executor.Call_HEARTBEAT, FrameworkID: mesos.FrameworkID{Value: "nope"}, ExecutorID: mesos.ExecutorID{Value: "raw"}}), 400},
		"unknown executor":  {PB, "", pb(t, &executor.Call{Type: executor.Call_HEARTBEAT, FrameworkID: mesos.FrameworkID{Value: "fw"}, ExecutorID: mesos.ExecutorID{Value: "nope"}}), 400},
		"not subscribed":    {PB, "", pb(t, good), 403},
		"unknown type":      {PB, "", pb(t, ids(executor.Call{Type: executor.Call_UNKNOWN})), 501},
		"update missing":    {PB, "", pb(t, ids(executor.Call{Type: executor.Call_UPDATE})), 400},
		"short uuid":        {PB, "", pb(t, update("mine", mesos.TASK_RUNNING, mesos.SOURCE_EXECUTOR, []byte("x"))), 400},
		"staging":           {PB, "", pb(t, update("mine", mesos.TASK_STAGING, mesos.SOURCE_EXECUTOR, uid)), 400},
		"wrong source":      {PB, "", pb(t, update("mine", mesos.TASK_RUNNING, mesos.SOURCE_MASTER, uid)), 400},
		"subscribe missing": {PB, "", pb(t, ids(executor.Call{Type: executor.Call_SUBSCRIBE})), 400},
		"not acceptable":    {PB, "text/html", pb(t, ids(executor.Call{Type: executor.Call_SUBSCRIBE, Subscribe: &executor.Call_Subscribe{}})), 406},
	} {
		if got := code(t, post(t, ta, c.ctype, c.accept, c.body)); got != c.want {
			t.Errorf("%s: %d, want %d", name, got, c.want)
		}
	}

	// SUBSCRIBE: SUBSCRIBED then the queued LAUNCH.
	resp = post(t, ta, PB, PB, pb(t, ids(executor.Call{Type: executor.Call_SUBSCRIBE, Subscribe: &executor.Call_Subscribe{}})))
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != PB {
		t.Fatalf("SUBSCRIBE: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	rr := mesoshttp.NewRecordReader(resp.Body, 0)
	next := func() executor.Event {
		rec, err := rr.ReadRecord()
		if err != nil {
			t.Fatal(err)
		}
		var e executor.Event
		if err := proto.Unmarshal(rec, &e); err != nil {
			t.Fatal(err)
		}
		return e
	}
	if e := next(); e.Type != executor.Event_SUBSCRIBED || e.Subscribed.FrameworkInfo.ID.Value != "fw" || e.Subscribed.AgentInfo.ID.GetValue() != "S1" {
		t.Fatalf("first event %v", e)
	}
	if e := next(); e.Type != executor.Event_LAUNCH || e.Launch.Task.TaskID.Value != "mine" {
		t.Fatalf("second event %v", e)
	}
	if got := code(t, post(t, ta, PB, "", pb(t, ids(executor.Call{Type: executor.Call_HEARTBEAT})))); got != 202 {
		t.Fatalf("HEARTBEAT: %d", got)
	}
	if got := code(t, post(t, ta, PB, "", pb(t, update("not-mine", mesos.TASK_RUNNING, mesos.SOURCE_EXECUTOR, uuid.New())))); got != 400 {
		t.Fatalf("update for a task the executor does not own: %d", got)
	}
	// UPDATE is acknowledged on the stream; a duplicate is re-acknowledged.
	for range 2 {
		if got := code(t, post(t, ta, PB, "", pb(t, good))); got != 202 {
			t.Fatalf("UPDATE: %d", got)
		}
		if e := next(); e.Type != executor.Event_ACKNOWLEDGED || !bytes.Equal(e.Acknowledged.UUID, uid) {
			t.Fatalf("ack event %v", e)
		}
	}
	if n := len(m.states("mine")); n != 1 {
		t.Fatalf("%d distinct updates forwarded, want 1", n)
	}
	jsonMsg, _ := mesoshttp.Encode(mesoshttp.JSON, ids(executor.Call{Type: executor.Call_MESSAGE, Message: &executor.Call_Message{Data: []byte("hi")}}))
	if got := code(t, post(t, ta, "application/json", "", jsonMsg)); got != 202 {
		t.Fatalf("JSON MESSAGE: %d", got)
	}
}

func TestFilesEndpoints(t *testing.T) {
	m := newFakeMaster()
	ta := startAgent(t, m, fastConfig(t, t.TempDir()))
	runTask(t, ta, fwInfo("fw", false), cmdTask("f", "printf 0123456789"))
	m.waitState(t, "f", mesos.TASK_FINISHED)
	sb, _ := filepath.EvalSymlinks(filepath.Join(ta.workDir, "slaves/S1/frameworks/fw/executors/f/runs/latest"))
	get := func(path string, q url.Values) (int, []byte) {
		resp, err := http.Get("http://" + ta.cfg.Endpoint + path + "?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	c, b := get("/files/read", url.Values{"path": {sb + "/stdout"}, "offset": {"2"}, "length": {"3"}})
	var rd struct {
		Data   string `json:"data"`
		Offset int64  `json:"offset"`
	}
	if c != 200 || json.Unmarshal(b, &rd) != nil || rd.Data != "234" || rd.Offset != 2 {
		t.Fatalf("read: %d %s", c, b)
	}
	if c, b = get("/files/read", url.Values{"path": {sb + "/stdout"}, "offset": {"-1"}}); c != 200 || !strings.Contains(string(b), `"offset":10`) {
		t.Fatalf("size: %d %s", c, b)
	}
	if c, b = get("/files/browse", url.Values{"path": {sb}}); c != 200 || !strings.Contains(string(b), "stdout") {
		t.Fatalf("browse: %d %s", c, b)
	}
	// Outside the sandboxes: refused, also through a symlink.
	if err := os.Symlink("/etc", filepath.Join(sb, "escape")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/etc/passwd", sb + "/../../../../../../../../meta/slaves/latest", sb + "/escape/passwd", "relative"} {
		if c, _ := get("/files/read", url.Values{"path": {p}}); c != 404 {
			t.Errorf("read %s: %d, want 404", p, c)
		}
	}
	if c, _ := get("/files/read", url.Values{"path": {sb + "/stdout"}, "offset": {"x"}}); c != 400 {
		t.Errorf("bad offset: %d", c)
	}
}
