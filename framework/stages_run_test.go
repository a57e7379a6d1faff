package framework_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/driver"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/internal/driverseam"
	"github.com/flint-mesos/flint/shuffle/shuffleserver"
)

// sumsJob: the numbers 0..39 in 4 partitions, shuffled by n%3 (shuffle 0),
// summed per key and shuffled into one partition (shuffle 1), returned as
// "key=sum" lines: three stages.
func sumsJob() *driver.StageJob {
	return &driver.StageJob{Spec: dagscheduler.JobSpec{Name: "test.sums", Final: "total", Nodes: []dagscheduler.Node{
		{ID: "nums", Partitions: 4},
		{ID: "bykey", Partitions: 3, Deps: []dagscheduler.Dep{{Kind: dagscheduler.Shuffle, Parent: "nums", ShuffleID: 0}}},
		{ID: "total", Partitions: 1, Deps: []dagscheduler.Dep{{Kind: dagscheduler.Shuffle, Parent: "bykey", ShuffleID: 1}}},
	}}}
}

// loseOnce, when set, makes the first reduce task of stage 1 delete one
// of the blocks it is about to read, as if its executor's disk lost it.
var loseOnce atomic.Bool

func u64(v uint64) []byte { return binary.AppendUvarint(nil, v) }

func readAll(ctx context.Context, sh stagetask.Shuffle, r stagetask.Read) (map[uint64]uint64, error) {
	st, err := sh.Open(ctx, r, nil, nil)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	out := map[uint64]uint64{}
	for {
		k, v, err := st.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		kk, _ := binary.Uvarint(k)
		vv, _ := binary.Uvarint(v)
		out[kk] += vv
	}
	return out, nil
}

// loseBlock deletes one map output's files where its executor keeps them,
// as if the executor's disk lost them.
func loseBlock(shuffleID int, g mapoutput.FetchGroup) error {
	addr, err := shuffleserver.ParseAddress(g.Location.Address)
	if err != nil {
		return err
	}
	base := filepath.Join(addr.Dir, fmt.Sprintf("shuffle_%d", shuffleID), strconv.Itoa(g.Blocks[0].MapIndex))
	return errors.Join(os.Remove(base+".data"), os.Remove(base+".index"))
}

func init() {
	stagetask.Register("test.sums", stagetask.RunnerFunc(func(ctx context.Context, t *stagetask.Task, sh stagetask.Shuffle) (stagetask.Output, error) {
		switch t.Node {
		case "nums":
			w, err := sh.Create(ctx, stagetask.WriteSpec{ShuffleID: t.ShuffleID, MapIndex: t.Partition, Partitions: t.NumReduces, Attempt: t.Attempt})
			if err != nil {
				return stagetask.Output{}, err
			}
			for n := uint64(t.Partition * 10); n < uint64(t.Partition*10+10); n++ {
				if err := w.Add(int(n%3), u64(n%3), u64(n)); err != nil {
					return stagetask.Output{}, err
				}
			}
			sizes, err := w.Commit()
			return stagetask.Output{Sizes: sizes}, err
		case "bykey":
			if t.Partition == 0 && loseOnce.CompareAndSwap(true, false) {
				if err := loseBlock(t.Reads[0].ShuffleID, t.Reads[0].Groups[0]); err != nil {
					return stagetask.Output{}, err
				}
			}
			sums, err := readAll(ctx, sh, t.Reads[0])
			if err != nil {
				return stagetask.Output{}, err
			}
			w, err := sh.Create(ctx, stagetask.WriteSpec{ShuffleID: t.ShuffleID, MapIndex: t.Partition, Partitions: t.NumReduces, Attempt: t.Attempt})
			if err != nil {
				return stagetask.Output{}, err
			}
			if err := w.Add(0, u64(uint64(t.Partition)), u64(sums[uint64(t.Partition)])); err != nil {
				return stagetask.Output{}, err
			}
			sizes, err := w.Commit()
			return stagetask.Output{Sizes: sizes}, err
		case "total":
			sums, err := readAll(ctx, sh, t.Reads[0])
			if err != nil {
				return stagetask.Output{}, err
			}
			var lines []string
			for k, v := range sums {
				lines = append(lines, fmt.Sprintf("%d=%d", k, v))
			}
			slices.Sort(lines)
			return stagetask.Output{Value: []byte(strings.Join(lines, " "))}, nil
		}
		return stagetask.Output{}, fmt.Errorf("no node %q", t.Node)
	}))
}

func wantSums() string {
	sums := map[int]int{}
	for n := range 40 {
		sums[n%3] += n
	}
	return fmt.Sprintf("0=%d 1=%d 2=%d", sums[0], sums[1], sums[2])
}

type stageLog struct {
	mu     sync.Mutex
	failed []string
	done   []int
}

func (l *stageLog) OnEvent(e event.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sc, ok := e.(event.StageCompleted); ok {
		if sc.FailureReason != "" {
			l.failed = append(l.failed, sc.FailureReason)
		} else {
			l.done = append(l.done, sc.StageID)
		}
	}
}

func TestMultiStageJobInLocalMode(t *testing.T) {
	fc := newContext(t, "flint.master=local[2]")
	log := &stageLog{}
	fc.AddListener(log)
	out, err := driverseam.Of(fc).Driver.RunStages(context.Background(), sumsJob())
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || string(out[0]) != wantSums() {
		t.Fatalf("result %q, want %q", out, wantSums())
	}
	// a second action over the same lineage skips the map stages
	out, err = driverseam.Of(fc).Driver.RunStages(context.Background(), sumsJob())
	if err != nil || string(out[0]) != wantSums() {
		t.Fatalf("second run: %q, %v", out, err)
	}
	waitFor(t, func() bool { log.mu.Lock(); defer log.mu.Unlock(); return len(log.done) == 4 })
	log.mu.Lock()
	if !slices.Equal(log.done, []int{0, 1, 2, 5}) || len(log.failed) != 0 {
		t.Fatalf("stages completed %v (failed %v), want 0, 1, 2 then only the second job's result stage 5", log.done, log.failed)
	}
	log.mu.Unlock()
	// released shuffles are recomputed by the next job
	if !driverseam.Of(fc).Driver.ReleaseShuffle(0) || !driverseam.Of(fc).Driver.ReleaseShuffle(1) || driverseam.Of(fc).Driver.ReleaseShuffle(1) {
		t.Fatal("ReleaseShuffle did not release shuffles 0 and 1 exactly once")
	}
	out, err = driverseam.Of(fc).Driver.RunStages(context.Background(), sumsJob())
	if err != nil || string(out[0]) != wantSums() {
		t.Fatalf("run after release: %q, %v", out, err)
	}
	waitFor(t, func() bool { log.mu.Lock(); defer log.mu.Unlock(); return len(log.done) == 7 })
	log.mu.Lock()
	defer log.mu.Unlock()
	if !slices.Equal(log.done[4:], []int{6, 7, 8}) {
		t.Fatalf("stages after the release %v, want all three stages of the job to run again (6, 7, 8)", log.done[4:])
	}
}

func TestLostShuffleBlockIsRecomputed(t *testing.T) {
	fc := newContext(t, "flint.master=local[2]")
	log := &stageLog{}
	fc.AddListener(log)
	job := sumsJob()
	job.Spec.Nodes[1].Deps[0].ShuffleID, job.Spec.Nodes[2].Deps[0].ShuffleID = 10, 11
	loseOnce.Store(true)
	out, err := driverseam.Of(fc).Driver.RunStages(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if string(out[0]) != wantSums() {
		t.Fatalf("result %q after a lost block, want %q", out[0], wantSums())
	}
	if loseOnce.Load() {
		t.Fatal("the block was never lost: the test proved nothing")
	}
	waitFor(t, func() bool { log.mu.Lock(); defer log.mu.Unlock(); return len(log.failed) > 0 })
	log.mu.Lock()
	defer log.mu.Unlock()
	if !strings.Contains(log.failed[0], "fetch") || !strings.Contains(log.failed[0], "shuffle 10") {
		t.Fatalf("stage failure %q, want the fetch failure of shuffle 10", log.failed[0])
	}
}

func TestStageJobErrors(t *testing.T) {
	fc := newContext(t, "flint.master=local[2]")
	job := sumsJob()
	job.Spec.Name = "test.nobody"
	if _, err := driverseam.Of(fc).Driver.RunStages(context.Background(), job); !errors.Is(err, framework.ErrInvalidJob) || !strings.Contains(err.Error(), `no runner registered for job "test.nobody"`) {
		t.Fatalf("unregistered job: %v", err)
	}
	job = sumsJob()
	job.Spec.Nodes[2].Deps[0].Parent = "nowhere"
	if _, err := driverseam.Of(fc).Driver.RunStages(context.Background(), job); !errors.Is(err, dagscheduler.ErrInvalidJob) {
		t.Fatalf("bad lineage: %v", err)
	}
}

// diamondGate holds the map tasks of the diamond job until released.
var diamondGate atomic.Pointer[chan struct{}]

func init() {
	stagetask.Register("test.diamond", stagetask.RunnerFunc(func(ctx context.Context, t *stagetask.Task, sh stagetask.Shuffle) (stagetask.Output, error) {
		if t.Kind == stagetask.Map {
			select {
			case <-*diamondGate.Load():
			case <-ctx.Done():
				return stagetask.Output{}, ctx.Err()
			}
			w, err := sh.Create(ctx, stagetask.WriteSpec{ShuffleID: t.ShuffleID, MapIndex: t.Partition, Partitions: t.NumReduces, Attempt: t.Attempt})
			if err != nil {
				return stagetask.Output{}, err
			}
			if err := w.Add(0, u64(uint64(t.ShuffleID)), u64(uint64(t.Partition+1))); err != nil {
				return stagetask.Output{}, err
			}
			sizes, err := w.Commit()
			return stagetask.Output{Sizes: sizes}, err
		}
		total := uint64(0)
		for _, r := range t.Reads {
			sums, err := readAll(ctx, sh, r)
			if err != nil {
				return stagetask.Output{}, err
			}
			for _, v := range sums {
				total += v
			}
		}
		return stagetask.Output{Value: u64(total)}, nil
	}))
}

// Two map stages run at once: the progress source reports both, and the
// join's stage explains that it waits on them.
func TestDiamondShowsStagesSideBySide(t *testing.T) {
	fc := newContext(t, "flint.master=local[4]")
	gate := make(chan struct{})
	diamondGate.Store(&gate)
	job := &driver.StageJob{Spec: dagscheduler.JobSpec{Name: "test.diamond", Final: "join", Nodes: []dagscheduler.Node{
		{ID: "left", Partitions: 2}, {ID: "right", Partitions: 2},
		{ID: "join", Partitions: 1, Deps: []dagscheduler.Dep{{Kind: dagscheduler.Shuffle, Parent: "left", ShuffleID: 20},
			{Kind: dagscheduler.Shuffle, Parent: "right", ShuffleID: 21}}},
	}}}
	type res struct {
		out [][]byte
		err error
	}
	done := make(chan res, 1)
	go func() {
		out, err := driverseam.Of(fc).Driver.RunStages(context.Background(), job)
		done <- res{out, err}
	}()
	waitFor(t, func() bool {
		active := 0
		for _, st := range fc.ActiveStages() {
			if !st.Ended && st.Active > 0 {
				active++
			}
		}
		return active == 2
	})
	ex := fc.ExplainStage(2)
	if ex.State != framework.StageWaiting || !slices.Equal(ex.WaitingOn, []int{0, 1}) {
		t.Fatalf("join stage: %+v", ex)
	}
	if !strings.Contains(ex.Detail, "waits on stage 0, 1") {
		t.Fatalf("detail %q", ex.Detail)
	}
	close(gate)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	// left contributes 1+2, right 1+2
	if got, _ := binary.Uvarint(r.out[0]); got != 6 {
		t.Fatalf("join = %d, want 6", got)
	}
}

// eventOrder records, in delivery order, the stage and job events of a run.
type eventOrder struct {
	mu   sync.Mutex
	seq  []string
	done chan struct{}
}

func (l *eventOrder) OnEvent(e event.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch e := e.(type) {
	case event.StageSubmitted:
		l.seq = append(l.seq, fmt.Sprintf("submit %d", e.StageID))
	case event.StageCompleted:
		l.seq = append(l.seq, fmt.Sprintf("complete %d", e.StageID))
	case event.JobEnd:
		l.seq = append(l.seq, "job end")
		close(l.done)
	}
}

// Listeners hear a job of stages in Spark's order: a stage completes before
// the stage reading it is submitted, and every stage before the job ends (a
// UI that shows the job as ended must already count all its stages).
func TestStageEventsArriveInSparksOrder(t *testing.T) {
	fc := newContext(t, "flint.master=local[2]")
	l := &eventOrder{done: make(chan struct{})}
	fc.AddListener(l)
	job := sumsJob()
	job.Spec.Nodes[1].Deps[0].ShuffleID, job.Spec.Nodes[2].Deps[0].ShuffleID = 20, 21
	if _, err := driverseam.Of(fc).Driver.RunStages(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	want := []string{"submit 0", "complete 0", "submit 1", "complete 1", "submit 2", "complete 2", "job end"}
	if !slices.Equal(l.seq, want) {
		t.Fatalf("events %q, want %q", l.seq, want)
	}
}
