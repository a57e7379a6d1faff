package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/dispatcher"
	"github.com/flint-mesos/flint/framework/mesosconn/detector/zktest"
	"github.com/flint-mesos/flint/internal/waitfor"
)

// TestClusterModeLeaderElectionZK: two dispatchers on one ZooKeeper (sharing
// --store, as standbys must). The first leads; the second is a standby that
// answers 503 naming the leader. The leader is SIGKILLed with one driver
// running and one queued; once its ZooKeeper session expires the standby
// leads, subscribes as the same framework and reads the same records: the
// running driver is still its first attempt with the same task, the queued
// one waits and then runs once. Clients given both addresses follow.
func TestClusterModeLeaderElectionZK(t *testing.T) {
	zk := zktest.Start(t)
	job := testDriver(t)
	ctx := context.Background()
	flags := []string{"--max-drivers", "1", "--zk", "zk://" + zk + "/flint/ha", "--zk-session-timeout", "4s"}
	a := startCluster(t, flags...)
	b := &clusterEnv{t: t, master: a.master, home: a.home, store: a.store, extra: flags}
	b.startDispatcher()
	_, err := b.client().List(ctx)
	if !isStandby(err) || !strings.Contains(err.Error(), "the leader is http://"+a.disp) {
		t.Fatalf("the second dispatcher answers %v; want a standby naming http://%s", err, a.disp)
	}
	both := "mesos://" + a.disp + "," + b.disp
	a.via, b.via = both, both

	running := a.submit(job, "sleep")
	first := a.waitState(running, dispatcher.Running)
	queued := a.submit(job, "sleep")
	zc := zktest.Client(t, zk)
	fid, _, err := zc.Get("/flint/ha/framework-id")
	if err != nil || len(fid) == 0 {
		t.Fatalf("framework id in ZooKeeper: %q, %v", fid, err)
	}
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()

	var st dispatcher.StatusResponse
	if !waitfor.Poll(90*time.Second, func() bool {
		st, err = b.client().Status(ctx, running)
		return err == nil
	}) {
		t.Fatalf("the standby did not take over: %v\nstandby stderr:\n%s", err, b.errOut.String())
	}
	if st.DriverState != dispatcher.Running || st.TaskID != first.TaskID || st.Attempts != 1 {
		t.Fatalf("after the failover the running driver is %s task %s attempts %d, want RUNNING %s 1", st.DriverState, st.TaskID, st.Attempts, first.TaskID)
	}
	if st := b.status(queued); st.DriverState != dispatcher.Queued {
		t.Fatalf("after the failover the queued driver is %s", st.DriverState)
	}
	if now, _, err := zc.Get("/flint/ha/framework-id"); err != nil || string(now) != string(fid) {
		t.Fatalf("framework id now %q (%v), was %q", now, err, fid)
	}
	if !waitfor.Poll(30*time.Second, func() bool { return frameworkActive(a.master, string(fid)) }) {
		t.Fatalf("the master has no active framework %s: the new leader did not subscribe as it", fid)
	}
	if _, err := b.client().Kill(ctx, running); err != nil {
		t.Fatal(err)
	}
	b.waitState(running, dispatcher.Killed)
	if st := b.waitState(queued, dispatcher.Running); st.Attempts != 1 {
		t.Fatalf("queued driver attempts %d", st.Attempts)
	}
	if _, err := b.client().Kill(ctx, queued); err != nil {
		t.Fatal(err)
	}
	b.waitState(queued, dispatcher.Killed)
	if st := b.status(running); st.Attempts != 1 {
		t.Fatalf("the first driver was launched %d times", st.Attempts)
	}
}

// frameworkActive reports whether the master at addr lists framework id as
// active (subscribed).
func frameworkActive(addr, id string) bool {
	resp, err := http.Get("http://" + addr + "/master/state")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var st struct {
		Frameworks []struct {
			ID     string `json:"id"`
			Active bool   `json:"active"`
		} `json:"frameworks"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return false
	}
	for _, f := range st.Frameworks {
		if f.ID == id && f.Active {
			return true
		}
	}
	return false
}
