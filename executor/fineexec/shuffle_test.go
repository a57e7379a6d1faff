package fineexec_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/executor/fineexec"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/codec"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/proto/flintpb"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shuffleblock"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
	"github.com/flint-mesos/flint/shuffle/shuffleserver"
)

type fineMapOut struct {
	ExecutorID, Host, Address string
	Sizes                     []uint64
}

var (
	shuffleMap = framework.Register("fine_exec_test.shuffleMap", func(ctx context.Context, n int) (fineMapOut, error) {
		env, ok := shuffleenv.FromContext(ctx)
		if !ok {
			return fineMapOut{}, errors.New("no shuffle in the task's context")
		}
		w, err := env.Writer(5, 0, 0, 1, shuffle.ByteOrder)
		if err != nil {
			return fineMapOut{}, err
		}
		for i := range n {
			if err := w.Add(0, []byte{byte(i >> 8), byte(i)}, []byte("v")); err != nil {
				return fineMapOut{}, err
			}
		}
		res, err := w.Commit()
		loc := env.Location()
		return fineMapOut{ExecutorID: loc.ExecutorID, Host: loc.Host, Address: loc.Address, Sizes: res.Sizes}, err
	})
	shuffleCount = framework.Register("fine_exec_test.shuffleCount", func(ctx context.Context, snapshot []byte) (int, error) {
		env, ok := shuffleenv.FromContext(ctx)
		if !ok {
			return 0, errors.New("no shuffle in the task's context")
		}
		var snap mapoutput.Snapshot
		if err := snap.UnmarshalBinary(snapshot); err != nil {
			return 0, err
		}
		rd, err := env.Read(ctx, &snap, 0, shuffle.ByteOrder, nil)
		if err != nil {
			return 0, err
		}
		defer rd.Close()
		n := 0
		for {
			if _, _, err := rd.Next(); err == io.EOF {
				return n, nil
			} else if err != nil {
				return n, err
			}
			n++
		}
	})
)

// runOne launches fn(in) on executor ei from the next offer and returns
// the decoded result of its terminal update.
func runOne[T any](t *testing.T, conn *mesosconn.Conn, f *rawFramework, ei *mesos.ExecutorInfo, id, fn string, in any) (mesos.AgentID, T) {
	t.Helper()
	var out T
	cd := codec.Default()
	input, err := cd.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := (&flintpb.TaskDescription{TaskId: uint64(len(id)), Function: fn, Codec: cd.Name(), Input: input, Cpus: 1}).Marshal()
	o := <-f.offers
	taken, _, ok := mesosconn.Take(o.Resources, mesosconn.Want{CPUs: 1})
	if !ok {
		t.Fatal("offer too small")
	}
	if err := conn.Launch([]mesos.OfferID{o.ID}, []mesos.TaskInfo{{Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: o.AgentID, Resources: taken, Executor: ei, Data: data}}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool {
		st, ok := f.last(id)
		return ok && st.GetState() != mesos.TASK_STAGING && st.GetState() != mesos.TASK_STARTING && st.GetState() != mesos.TASK_RUNNING
	}, id+" ends")
	st, _ := f.last(id)
	var u flintpb.StatusUpdate
	if err := u.Unmarshal(st.Data); err != nil || st.GetState() != mesos.TASK_FINISHED {
		t.Fatalf("%s: %s %v (%v)", id, st.GetState(), u.GetFailure(), err)
	}
	if err := cd.Unmarshal(u.Result.GetInline(), &out); err != nil {
		t.Fatal(err)
	}
	return o.AgentID, out
}

func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		<-tick.C
	}
}

// sandboxLogs is everything the agent's executors wrote to stderr.
func sandboxLogs(workDir string) string {
	var all bytes.Buffer
	filepath.WalkDir(workDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "stderr" {
			b, _ := os.ReadFile(p)
			all.Write(b)
		}
		return nil
	})
	return all.String()
}

// A fine-grained executor holding map outputs outlives its idle timeout
// (a reduce task reads the outputs after it passed), and exits on idle
// once the driver releases the shuffle, deleting the files.
func TestFineExecutorStaysWhileItHoldsShuffleOutputs(t *testing.T) {
	workDir, localDir := t.TempDir(), t.TempDir()
	conn, f := startRawIn(t, workDir)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	token := shuffleserver.Token("0123456789abcdef0123", "app-fine")
	shuffleSet := shuffleenv.Settings{AppID: "app-fine", Token: token, TLS: true,
		LocalDir: localDir, Memory: 4 << 20, Compression: shuffleblock.S2, MaxRetries: 1, RetryWait: time.Millisecond, Timeout: 10 * time.Second}.Wire()
	set, err := fineexec.Settings{TaskCPUs: 1, MaxDirectResultSize: 1 << 20, Secret: "0123456789abcdef0123", DriverHost: "127.0.0.1",
		IdleTimeout: 100 * time.Millisecond, Shuffle: shuffleSet}.Encode()
	if err != nil {
		t.Fatal(err)
	}
	no, val := false, contract.RoleFine
	ei := &mesos.ExecutorInfo{Type: mesos.ExecutorInfo_CUSTOM, ExecutorID: mesos.ExecutorID{Value: "e1"}, Data: set,
		Command: &mesos.CommandInfo{Value: &exe, Shell: &no, Arguments: []string{exe},
			Environment: &mesos.Environment{Variables: []mesos.Environment_Variable{{Name: "FLINT_ROLE", Value: &val}}}}}

	agentID, out := runOne[fineMapOut](t, conn, f, ei, "map", shuffleMap.Name(), 300)
	if out.ExecutorID != "e1" || !strings.HasPrefix(out.Address, "https://") {
		t.Fatalf("map status %+v", out)
	}
	waitUntil(t, func() bool { return strings.Contains(sandboxLogs(workDir), "holding shuffle outputs") }, "the idle timeout passes with outputs held")

	tr := mapoutput.NewTracker(mapoutput.DefaultConfig())
	tr.RegisterShuffle(5, 1, 1)
	if err := tr.RegisterMapOutput(mapoutput.Status{ShuffleID: 5, MapIndex: 0, TaskID: 1, Location: mapoutput.Location{ExecutorID: out.ExecutorID, Host: out.Host, Address: out.Address}, Sizes: out.Sizes}); err != nil {
		t.Fatal(err)
	}
	snap, _ := tr.Snapshot(5)
	data, _ := snap.MarshalBinary()
	if _, n := runOne[int](t, conn, f, ei, "reduce", shuffleCount.Name(), data); n != 300 {
		t.Fatalf("reduce read %d records after the idle timeout, want 300", n)
	}

	if err := conn.Message(agentID, ei.ExecutorID, contract.ReleaseMessage(5)); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool {
		left, _ := os.ReadDir(localDir)
		return len(left) == 0 && strings.Contains(sandboxLogs(workDir), "no task for")
	}, "the executor exits on idle after the release and removes its shuffle directory")
	if logs := sandboxLogs(workDir); !strings.Contains(logs, "released shuffle 5") || strings.Contains(logs, "0123456789abcdef0123") || strings.Contains(logs, token) {
		t.Fatalf("executor log: release not logged, or a secret was:\n%s", logs)
	}
}
