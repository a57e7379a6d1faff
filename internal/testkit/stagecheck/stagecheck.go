// Package stagecheck runs a job of stages (driver.Driver.RunStages)
// over the executors' real shuffle in whatever mode a test's Context
// runs — local, coarse, fine or embedded — and checks its result exactly,
// also when the executor running its result task is killed mid-job (its
// map outputs are then recomputed through the driver's DAG core).
//
// The job, registered at init as "stagecheck.sums" (executors built from
// the test binary have it too): the numbers 0..N-1 in 4 map partitions,
// shuffled by n%5 into 3 partitions (shuffle A), summed per key and
// shuffled into one partition (shuffle B), returned as "key=sum" lines.
package stagecheck

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/driver"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/internal/driverseam"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// Job is the registered job's name.
const Job = "stagecheck.sums"

const (
	perMap = 2500 // numbers per map partition
	keys   = 5
)

func u64(v uint64) []byte { return binary.AppendUvarint(nil, v) }

func init() { stagetask.Register(Job, stagetask.RunnerFunc(runTask)) }

func runTask(ctx context.Context, t *stagetask.Task, sh stagetask.Shuffle) (stagetask.Output, error) {
	switch t.Node {
	case "nums":
		w, err := sh.Create(ctx, stagetask.WriteSpec{ShuffleID: t.ShuffleID, MapIndex: t.Partition, Partitions: t.NumReduces, Attempt: t.Attempt})
		if err != nil {
			return stagetask.Output{}, err
		}
		for n := uint64(t.Partition * perMap); n < uint64((t.Partition+1)*perMap); n++ {
			k := n % keys
			if err := w.Add(int(k%uint64(t.NumReduces)), u64(k), u64(n)); err != nil {
				w.Abort()
				return stagetask.Output{}, err
			}
		}
		sizes, err := w.Commit()
		return stagetask.Output{Sizes: sizes}, err
	case "bykey":
		if gate := string(t.Args); gate != "" && t.Partition == 0 {
			// the test holds the job here until it has killed this
			// executor (later attempts find a regular empty file)
			if _, err := os.ReadFile(gate); err != nil {
				return stagetask.Output{}, err
			}
		}
		sums, err := readAll(ctx, sh, t.Reads)
		if err != nil {
			return stagetask.Output{}, err
		}
		w, err := sh.Create(ctx, stagetask.WriteSpec{ShuffleID: t.ShuffleID, MapIndex: t.Partition, Partitions: t.NumReduces, Attempt: t.Attempt})
		if err != nil {
			return stagetask.Output{}, err
		}
		for _, k := range slices.Sorted(mapsKeys(sums)) {
			if err := w.Add(0, u64(k), u64(sums[k])); err != nil {
				w.Abort()
				return stagetask.Output{}, err
			}
		}
		sizes, err := w.Commit()
		return stagetask.Output{Sizes: sizes}, err
	case "total":
		sums, err := readAll(ctx, sh, t.Reads)
		if err != nil {
			return stagetask.Output{}, err
		}
		return stagetask.Output{Value: []byte(format(sums))}, nil
	}
	return stagetask.Output{}, fmt.Errorf("stagecheck: no node %q", t.Node)
}

func mapsKeys(m map[uint64]uint64) func(func(uint64) bool) {
	return func(yield func(uint64) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func readAll(ctx context.Context, sh stagetask.Shuffle, reads []stagetask.Read) (map[uint64]uint64, error) {
	out := map[uint64]uint64{}
	for _, r := range reads {
		s, err := sh.Open(ctx, r, nil, nil)
		if err != nil {
			return nil, err
		}
		for {
			k, v, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				s.Close()
				return nil, err
			}
			kk, _ := binary.Uvarint(k)
			vv, _ := binary.Uvarint(v)
			out[kk] += vv
		}
		s.Close()
	}
	return out, nil
}

func format(sums map[uint64]uint64) string {
	var lines []string
	for k, v := range sums {
		lines = append(lines, fmt.Sprintf("%d=%d", k, v))
	}
	slices.Sort(lines)
	return strings.Join(lines, " ")
}

// Want is the job's result, computed directly.
func Want() string {
	sums := map[uint64]uint64{}
	for n := range uint64(4 * perMap) {
		sums[n%keys] += n
	}
	return format(sums)
}

// Sums is the job (gate, when set, is a file the task of partition 0 of
// its second stage reads to its end first); shuffle ids a and b.
func Sums(a, b int, gate string) *driver.StageJob {
	return &driver.StageJob{Args: []byte(gate), Description: "stagecheck sums", Spec: dagscheduler.JobSpec{Name: Job, Final: "total", Nodes: []dagscheduler.Node{
		{ID: "nums", Partitions: 4},
		{ID: "bykey", Partitions: 3, Deps: []dagscheduler.Dep{{Kind: dagscheduler.Shuffle, Parent: "nums", ShuffleID: a}}},
		{ID: "total", Partitions: 1, Deps: []dagscheduler.Dep{{Kind: dagscheduler.Shuffle, Parent: "bykey", ShuffleID: b}}},
	}}}
}

// Stages records the stage events of a Context.
type Stages struct {
	mu        sync.Mutex
	submitted []event.StageSubmitted
	completed []event.StageCompleted
	mapEnds   map[string]int // successful map tasks by executor
	executors int
	fc        *framework.Context
}

// Listen adds a recorder to fc.
func Listen(fc *framework.Context) *Stages {
	s := &Stages{mapEnds: map[string]int{}, fc: fc}
	fc.AddListener(s)
	return s
}

// OnEvent implements event.Listener.
func (s *Stages) OnEvent(e event.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch e := e.(type) {
	case event.StageSubmitted:
		s.submitted = append(s.submitted, e)
	case event.StageCompleted:
		s.completed = append(s.completed, e)
	case event.ExecutorAdded:
		s.executors++
	case event.TaskEnd:
		if e.State == "FINISHED" && e.ShuffleWriteBytes > 0 {
			s.mapEnds[e.ExecutorID]++
		}
	}
}

// Completed lists the stages that completed (failed ones as "id!").
func (s *Stages) Completed() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, c := range s.completed {
		if c.FailureReason != "" {
			out = append(out, strconv.Itoa(c.StageID)+"!")
		} else {
			out = append(out, strconv.Itoa(c.StageID))
		}
	}
	return out
}

// Attempts is the highest attempt submitted of each stage.
func (s *Stages) Attempts() map[int]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[int]int{}
	for _, e := range s.submitted {
		out[e.StageID] = max(out[e.StageID], e.Attempt)
	}
	return out
}

// Executors is the number of executors added. Executors can be added
// before Listen (fine mode adds its agents' executors with the first
// offers, right after NewContext): those are counted through the UI
// store, which hears every event from NewContext on (stages_test
// TestStagesSurviveAKilledExecutor waited a minute for two executors
// added before its listener, under make stress).
func (s *Stages) Executors() int {
	s.mu.Lock()
	n := s.executors
	s.mu.Unlock()
	if store := driverseam.Of(s.fc).UIStore; store != nil {
		n = max(n, len(store.Executors(false)))
	}
	return n
}

// MapExecutors are the executors that wrote map output.
func (s *Stages) MapExecutors() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(func(yield func(string) bool) {
		for e := range s.mapEnds {
			if !yield(e) {
				return
			}
		}
	})
}

// Run runs the job on fc and checks its result.
func Run(ctx context.Context, t testing.TB, fc *framework.Context, a, b int) {
	t.Helper()
	out, err := driverseam.Of(fc).Driver.RunStages(ctx, Sums(a, b, ""))
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || string(out[0]) != Want() {
		t.Fatalf("result %q, want %q", out, Want())
	}
}

// RunKillingExecutor runs the job on fc, kills (SIGKILL) the executor
// process running partition 0 of its second stage while that task waits
// (the executor holds map outputs of the first stage when it ran some of
// its tasks), and checks that the result is still exact. It returns the
// victim's pid.
func RunKillingExecutor(ctx context.Context, t testing.TB, fc *framework.Context, a, b int) int {
	t.Helper()
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	type res struct {
		out [][]byte
		err error
	}
	done := make(chan res, 1)
	go func() { out, err := driverseam.Of(fc).Driver.RunStages(ctx, Sums(a, b, gate)); done <- res{out, err} }()
	// Opening the FIFO for writing returns once the gated task opened it
	// for reading: the first stage is done.
	opened := make(chan *os.File, 1)
	go func() {
		w, err := os.OpenFile(gate, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
		}
		opened <- w
	}()
	var w *os.File
	select {
	case w = <-opened:
	case r := <-done:
		t.Fatalf("the job ended (%v) before its gated task ran", r.err)
	}
	victim := 0
	waitfor.True(t, 10*time.Second, "an executor process holding the gate", func() bool {
		victim = holder(gate)
		return victim != 0
	})
	tmp := gate + ".file"
	if err := os.WriteFile(tmp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, gate); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w.Close()
	r := <-done
	if r.err != nil {
		t.Fatalf("the job failed after its executor (pid %d) was killed: %v", victim, r.err)
	}
	if len(r.out) != 1 || string(r.out[0]) != Want() {
		t.Fatalf("result %q after the kill, want %q", r.out, Want())
	}
	return victim
}

// holder is a process other than this one with path open.
func holder(path string) int {
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		for _, fd := range fds {
			if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && l == path {
				return pid
			}
		}
	}
	return 0
}

// OverTheShuffle is the scenario of coarse's and fine's
// TestStagesOverTheExecutorsShuffle on fc (a Mesos context with at least
// two executors to come): a job of stages runs over the executors' real
// shuffle, map outputs written by two executors and read by the next
// stage (from disk on the same host, from the writer's shuffle server
// otherwise); a second action over the same lineage runs only its result
// stage (Spark's skipped stages).
func OverTheShuffle(t *testing.T, fc *framework.Context) {
	t.Helper()
	st := Listen(fc)
	waitfor.True(t, 60*time.Second, "two executors", func() bool { return st.Executors() >= 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	Run(ctx, t, fc, 0, 1)
	if got := st.MapExecutors(); len(got) < 2 {
		t.Fatalf("map outputs written by %v, want at least two executors", got)
	}
	Run(ctx, t, fc, 0, 1)
	waitfor.True(t, 10*time.Second, "four completed stages", func() bool { return len(st.Completed()) == 4 })
	if got, want := st.Completed(), []string{"0", "1", "2", "5"}; !slices.Equal(got, want) {
		t.Fatalf("completed stages %v, want %v (the second job's map stages 3 and 4 skipped)", got, want)
	}
}

// TaskEnds is a listener that records the stages a context submitted, in
// order, and its TaskEnd events.
type TaskEnds struct {
	mu     sync.Mutex
	stages []int
	ends   []event.TaskEnd
}

// OnEvent implements event.Listener.
func (r *TaskEnds) OnEvent(e event.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e := e.(type) {
	case event.StageSubmitted:
		r.stages = append(r.stages, e.StageID)
	case event.TaskEnd:
		r.ends = append(r.ends, e)
	}
}

// Submitted is the ids of the stages submitted so far, in order.
func (r *TaskEnds) Submitted() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.stages)
}

// Ends is the TaskEnd events so far.
func (r *TaskEnds) Ends() []event.TaskEnd {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ends)
}
