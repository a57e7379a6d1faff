package master_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
)

func postForm(t *testing.T, u, contentType, body string) (int, string) {
	t.Helper()
	res, err := http.Post(u, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// As Mesos' master (src/master/http.cpp): once it leads, every scheduler
// call is answered 503 "Master has not finished recovery" until its
// registry recovery ends, before any other check; an election starts the
// window again.
func TestSchedulerAPIAnswers503WhileRecovering(t *testing.T) {
	s, clk := newClockServer(t, 1, func(c *master.Config) { c.RecoveryTime = 3 * time.Second })
	const want = "Master has not finished recovery"
	check := func(when string) {
		t.Helper()
		for _, body := range []string{`{"type":"SUBSCRIBE"}`, `not even JSON`} {
			if code, msg := postForm(t, s.SchedulerURL(), "application/json", body); code != http.StatusServiceUnavailable || msg != want {
				t.Errorf("%s: %q answered %d %q, want 503 %q", when, body, code, msg, want)
			}
		}
	}
	check("at start")
	if got, want := s.Master.RecoveredAt(), clk.Now().Add(3*time.Second); !got.Equal(want) {
		t.Errorf("RecoveredAt %v, want %v", got, want)
	}
	clk.Advance(3*time.Second - time.Nanosecond)
	check("a nanosecond before the recovery ends")
	clk.Advance(time.Nanosecond)
	c := subscribe(t, s, allCodecs[0], frameworkInfo("after"))
	c.close()
	s.Master.Elected()
	check("after an election")
}

// A framework the master only knows from a re-registering agent (the
// master failed over and the driver never came back) has no failover
// timer: Mesos keeps it, inactive, indefinitely (MESOS-4659,
// docs/high-availability-framework-guide.md), whatever its
// failover_timeout. The operator's /teardown removes it.
func TestRecoveredFrameworkOutlivesItsFailoverTimeout(t *testing.T) {
	s, clk := newClockServer(t, 1, nil)
	ag := s.Fakes[0]
	fi := *frameworkInfo("orphan")
	fi.ID = &mesos.FrameworkID{Value: "dead-master-0000"}
	fi.FailoverTimeout = proto(1.0)
	task := mesos.Task{Name: "t", TaskID: mesos.TaskID{Value: "t"}, FrameworkID: *fi.ID, AgentID: mesos.AgentID{Value: ag.ID()},
		State: mesos.TASK_RUNNING.Enum(), Resources: mesos.Resources{scalar("cpus", 1), scalar("mem", 64)}}
	if err := ag.RegisterWith(s.Master, link.Registration{Frameworks: []mesos.FrameworkInfo{fi}, Tasks: []mesos.Task{task}}); err != nil {
		t.Fatal(err)
	}
	clk.Advance(time.Hour)
	d := getState(t, s)
	if len(d.Frameworks) != 1 || d.Frameworks[0].ID != "dead-master-0000" || d.Frameworks[0].Active || len(d.Frameworks[0].Tasks) != 1 {
		t.Fatalf("an hour past its 1 s failover timeout the master has %+v, want the inactive framework with its task", d.Frameworks)
	}
	teardown := s.URL + "/master/teardown"
	if code, msg := postForm(t, teardown, "application/x-www-form-urlencoded", ""); code != http.StatusBadRequest || msg != "Missing 'frameworkId' query parameter in the request body" {
		t.Errorf("/teardown without an id: %d %q", code, msg)
	}
	form := url.Values{"frameworkId": {"dead-master-0000"}}.Encode()
	if code, msg := postForm(t, teardown, "application/x-www-form-urlencoded", form); code != http.StatusOK {
		t.Fatalf("/teardown: %d %q", code, msg)
	}
	if _, err := ag.WaitFor(5*time.Second, func(m link.MasterMessage) bool {
		return m.ShutdownFramework != nil && m.ShutdownFramework.FrameworkID.Value == "dead-master-0000"
	}); err != nil {
		t.Fatalf("the agent was not told to shut the framework down: %v", err)
	}
	d = getState(t, s)
	if len(d.Frameworks) != 0 || len(d.CompletedFrameworks) != 1 || d.CompletedFrameworks[0].ID != "dead-master-0000" {
		t.Errorf("after /teardown: frameworks %+v, completed %+v", d.Frameworks, d.CompletedFrameworks)
	}
	if code, msg := postForm(t, teardown, "application/x-www-form-urlencoded", form); code != http.StatusBadRequest || msg != "No framework found with specified ID" {
		t.Errorf("second /teardown: %d %q", code, msg)
	}
	res, err := http.Get(teardown)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /teardown: %d, want 405", res.StatusCode)
	}
}
