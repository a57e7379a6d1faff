package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// Status updates a checkpointing framework has not acknowledged survive an
// agent restart: the new agent resends them, same uuids and in order, for
// a command task that ended while the old agent ran (its framework has no
// executor left) and for a running executor's task, and forgets them once acknowledged.
func TestRestartResendsPendingUpdates(t *testing.T) {
	workDir := t.TempDir()
	m1 := newFakeMaster()
	m1.autoAck = false // the framework acknowledges nothing before the restart
	cfg := fastConfig(t, workDir)
	a1 := startAgent(t, m1, cfg)
	// "gone" has no executor left at the restart, "ck" a running one.
	runTask(t, a1, fwInfo("gone", true), cmdTask("done", "true"))
	runTask(t, a1, fwInfo("ck", true), executorTask("r", "run", executorInfo("exr")))
	m1.waitExited(t, "done")
	waitfor.Msg(t, 10*time.Second, func() string {
		if d, r := len(a1.sum.Pending("gone", "done")), len(a1.sum.Pending("ck", "r")); d != 3 || r != 1 {
			return fmt.Sprintf("pending: done %d, r %d; want 3 and 1", d, r)
		}
		return ""
	})
	want := map[string][]link.StatusUpdate{"done": a1.sum.Pending("gone", "done"), "r": a1.sum.Pending("ck", "r")}
	if got := stateNames(m1.states("done")); got != "TASK_STARTING" {
		t.Fatalf("before the restart the master saw %s", got)
	}

	a1.Stop()
	a1.srv.Close()
	cfg.Endpoint = a1.cfg.Endpoint
	m2 := newFakeMaster()
	a2 := startAgent(t, m2, cfg)

	for task, ups := range want {
		m2.waitState(t, task, ups[len(ups)-1].Status.GetState())
		got := m2.states(task)
		if len(got) != len(ups) {
			t.Fatalf("%s: resent %s, want %d updates", task, stateNames(got), len(ups))
		}
		for i, u := range ups {
			if !bytes.Equal(got[i].UUID, u.Status.UUID) || got[i].GetState() != u.Status.GetState() ||
				got[i].GetSource() != u.Status.GetSource() || got[i].AgentID.GetValue() != "S1" || got[i].ExecutorID.GetValue() != u.Status.ExecutorID.GetValue() {
				t.Fatalf("%s: update %d resent as %+v, want %+v", task, i, got[i], u.Status)
			}
		}
	}
	// All acknowledged: nothing pending in memory or in the checkpoint.
	path := filepath.Join(workDir, "meta/slaves/S1/updates.json")
	waitfor.Msg(t, 10*time.Second, func() string {
		var ups []link.StatusUpdate
		b, err := os.ReadFile(path)
		if err == nil && json.Unmarshal(b, &ups) == nil && len(ups) == 0 && len(a2.sum.Snapshot()) == 0 {
			return ""
		}
		return fmt.Sprintf("checkpoint %s: %s %v; pending %d", path, b, err, len(a2.sum.Snapshot()))
	})
	if st := m2.states("r"); st[0].GetState() != mesos.TASK_RUNNING {
		t.Fatalf("r: %s", stateNames(st))
	}
}
