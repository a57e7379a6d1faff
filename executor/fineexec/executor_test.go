package fineexec_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/executor/fineexec"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/codec"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// TestMain: started by an agent with FLINT_ROLE set, this test binary is
// the fine executor with the test's functions registered.
func TestMain(m *testing.M) {
	if os.Getenv("FLINT_ROLE") == contract.RoleFine {
		if err := fineexec.Main(context.Background()); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

var triple = framework.Register("fine_exec_test.triple", func(_ context.Context, n int) (int, error) { return 3 * n, nil })

// framework is a raw Mesos framework launching hand-made tasks on the
// executor and collecting their updates.
type rawFramework struct {
	mu      sync.Mutex
	offers  chan mesos.Offer
	updates map[string][]mesos.TaskStatus
}

func startRaw(t *testing.T) (*mesosconn.Conn, *rawFramework) { return startRawIn(t, t.TempDir()) }

// startRawIn is startRaw with the agent's work directory (sandboxes) in
// workDir.
func startRawIn(t *testing.T, workDir string) (*mesosconn.Conn, *rawFramework) {
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	c, err := cluster.Start(context.Background(), cluster.Config{
		Listen: "127.0.0.1:0", Master: master.Config{AllocationInterval: 20 * time.Millisecond, AllocateOnRelease: true, Logger: log},
		Agents: 1, Agent: agent.Config{WorkDir: workDir, Resources: "cpus:4;mem:1024", ShutdownGrace: 2 * time.Second, Logger: log}, Logger: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	f := &rawFramework{offers: make(chan mesos.Offer, 16), updates: map[string][]mesos.TaskStatus{}}
	conn, err := mesosconn.Start(context.Background(), mesosconn.Config{
		Master: "mesos://" + strings.TrimPrefix(c.URL(), "http://"), Logger: log, DisableAutoRevive: true, DisablePeriodicRec: true,
	}, mesosconn.HandlerFuncs{
		OnOffers: func(os []mesos.Offer) {
			for _, o := range os {
				f.offers <- o
			}
		},
		OnUpdate: func(st mesos.TaskStatus) {
			f.mu.Lock()
			f.updates[st.TaskID.Value] = append(f.updates[st.TaskID.Value], st)
			f.mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Stop(context.Background(), true) })
	return conn, f
}

func (f *rawFramework) last(id string) (mesos.TaskStatus, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	us := f.updates[id]
	if len(us) == 0 {
		return mesos.TaskStatus{}, false
	}
	return us[len(us)-1], true
}

func TestExecutorTasks(t *testing.T) {
	conn, f := startRaw(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	set, err := fineexec.Settings{TaskCPUs: 1, MaxDirectResultSize: 1 << 20, Secret: "0123456789abcdef0123", DriverHost: "127.0.0.1"}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	no := false
	role := "FLINT_ROLE"
	val := contract.RoleFine
	ei := &mesos.ExecutorInfo{Type: mesos.ExecutorInfo_CUSTOM, ExecutorID: mesos.ExecutorID{Value: "e1"}, Data: set,
		Command: &mesos.CommandInfo{Value: &exe, Shell: &no, Arguments: []string{exe},
			Environment: &mesos.Environment{Variables: []mesos.Environment_Variable{{Name: role, Value: &val}}}}}
	cd := codec.Default()
	input, err := cd.Marshal(14)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := (&flintpb.TaskDescription{TaskId: 1, Function: triple.Name(), Codec: cd.Name(), Input: input, Cpus: 1}).Marshal()
	unknown, _ := (&flintpb.TaskDescription{TaskId: 3, Function: "no.such.function", Cpus: 1}).Marshal()
	data := map[string][]byte{"good": good, "garbage": []byte("\xff\xff\xff not a task description"), "unknown": unknown}
	o := <-f.offers
	var tasks []mesos.TaskInfo
	rest := o.Resources
	for _, id := range []string{"good", "garbage", "unknown"} {
		taken, r, ok := mesosconn.Take(rest, mesosconn.Want{CPUs: 1})
		if !ok {
			t.Fatal("offer too small")
		}
		rest = r
		tasks = append(tasks, mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: o.AgentID, Resources: taken, Executor: ei, Data: data[id]})
	}
	if err := conn.Launch([]mesos.OfferID{o.ID}, tasks); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		state mesos.TaskState
		kind  flintpb.FailureKind
	}{
		"good":    {mesos.TASK_FINISHED, flintpb.FailureKind_FAILURE_UNSPECIFIED},
		"garbage": {mesos.TASK_FAILED, flintpb.FailureKind_DECODE_ERROR},
		"unknown": {mesos.TASK_FAILED, flintpb.FailureKind_UNKNOWN_FUNCTION},
	}
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for id, w := range want {
		for {
			st, ok := f.last(id)
			if ok && st.GetState() != mesos.TASK_STAGING && st.GetState() != mesos.TASK_STARTING && st.GetState() != mesos.TASK_RUNNING {
				var u flintpb.StatusUpdate
				if err := u.Unmarshal(st.Data); err != nil {
					t.Fatalf("%s: update data: %v", id, err)
				}
				if st.GetState() != w.state || u.GetFailure().GetKind() != w.kind || st.GetSource() != mesos.SOURCE_EXECUTOR {
					t.Fatalf("%s: %s from %s with %+v; want %s %s", id, st.GetState(), st.GetSource(), u.Failure, w.state, w.kind)
				}
				if id == "good" {
					var out int
					if err := cd.Unmarshal(u.Result.GetInline(), &out); err != nil || out != 42 {
						t.Fatalf("result %d (%v)", out, err)
					}
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: no terminal update (last %v)", id, st.GetState())
			}
			<-tick.C
		}
	}
}
