package broadcastcheck

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
)

// Args: a Size-byte broadcast generated from Seed, read by Tasks tasks.
type Args struct {
	Size, Tasks int
	Seed        uint64
}

// Bytes is the broadcast's content, generated independently of the job.
func Bytes(size int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	out := make([]byte, size)
	for i := range out {
		out[i] = byte(r.Uint32())
	}
	return out
}

// reads is, per seed, each task's "pid address sha256" of the value it read.
var reads = struct {
	sync.Mutex
	m map[uint64][]string
}{m: map[uint64][]string{}}

var job = dataset.Job("broadcastcheck.read", func(b *dataset.Builder, a Args) error {
	var v []byte
	if b.Driver() { // the value is made on the driver only
		v = Bytes(a.Size, a.Seed)
	}
	bc := dataset.NewBroadcast(b, v)
	rs := dataset.Map(dataset.Range(b, 0, int64(a.Tasks), a.Tasks), func(int64) string {
		v := bc.Value()
		sum := sha256.Sum256(v)
		return fmt.Sprintf("%d %p %s", os.Getpid(), &v[0], hex.EncodeToString(sum[:]))
	})
	out, err := dataset.Collect(rs)
	if b.Driver() {
		reads.Lock()
		reads.m[a.Seed] = out
		reads.Unlock()
	}
	return err
})

// Run runs the job on fc and checks its reads: a.Tasks reads of the exact
// value, one copy per process (a second fetch or decode would be another
// slice, at another address). It returns the pids that read it.
func Run(ctx context.Context, t testing.TB, fc *framework.Context, a Args) []int {
	t.Helper()
	if _, err := job.Run(ctx, fc, a); err != nil {
		t.Fatal(err)
	}
	reads.Lock()
	got := reads.m[a.Seed]
	reads.Unlock()
	if len(got) != a.Tasks {
		t.Fatalf("%d reads, want %d", len(got), a.Tasks)
	}
	sum := sha256.Sum256(Bytes(a.Size, a.Seed))
	want := hex.EncodeToString(sum[:])
	addrs := map[int]map[string]bool{}
	for _, r := range got {
		f := strings.Fields(r)
		if len(f) != 3 || f[2] != want {
			t.Fatalf("a task read %q, want the value with sha256 %s", r, want)
		}
		pid, err := strconv.Atoi(f[0])
		if err != nil {
			t.Fatalf("read %q: %v", r, err)
		}
		if addrs[pid] == nil {
			addrs[pid] = map[string]bool{}
		}
		addrs[pid][f[1]] = true
	}
	var out []int
	for pid, as := range addrs {
		if len(as) != 1 {
			t.Errorf("process %d holds %d copies of the broadcast, want 1: %v", pid, len(as), as)
		}
		out = append(out, pid)
	}
	return out
}

// destroyedCounts is, per run key, the counts of destroyJob's first two
// actions.
var destroyedCounts = struct {
	sync.Mutex
	m map[string][2]int64
}{m: map[string][2]int64{}}

type destroyArgs struct {
	Key      string
	UseAfter bool
}

// destroyJob counts with a broadcast, destroys it, counts without it,
// then (UseAfter) reads it again, which must fail the action.
var destroyJob = dataset.Job("broadcastcheck.destroy", func(b *dataset.Builder, a destroyArgs) error {
	bc := dataset.NewBroadcast(b, map[string]int64{"rem": 1})
	xs := dataset.Range(b, 0, 100, 4)
	first, err := dataset.Count(dataset.Filter(xs, func(x int64) bool { return x%2 == bc.Value()["rem"] }))
	if err != nil {
		return err
	}
	bc.Destroy()
	second, err := dataset.Count(dataset.Filter(xs, func(x int64) bool { return x < 10 }))
	if err != nil {
		return err
	}
	if b.Driver() {
		destroyedCounts.Lock()
		destroyedCounts.m[a.Key] = [2]int64{first, second}
		destroyedCounts.Unlock()
	}
	if a.UseAfter {
		_, err = dataset.Count(dataset.Filter(xs, func(int64) bool { return bc.Value()["rem"] == 1 }))
	}
	return err
})

// Destroyed checks Destroy on fc (run with flint.task.maxFailures=1 for
// speed): actions before and after it count exactly (the later stage's
// tasks no longer list the broadcast), and an action reading it after
// Destroy fails, saying so.
func Destroyed(ctx context.Context, t testing.TB, fc *framework.Context) {
	t.Helper()
	key := fmt.Sprintf("%s/%p", t.Name(), fc)
	if _, err := destroyJob.Run(ctx, fc, destroyArgs{Key: key}); err != nil {
		t.Fatal(err)
	}
	destroyedCounts.Lock()
	got := destroyedCounts.m[key]
	destroyedCounts.Unlock()
	if got != [2]int64{50, 10} {
		t.Fatalf("counts before and after Destroy %v, want [50 10]", got)
	}
	_, err := destroyJob.Run(ctx, fc, destroyArgs{Key: key + "/after", UseAfter: true})
	if err == nil || !strings.Contains(err.Error(), "used after Destroy") {
		t.Fatalf("reading a destroyed broadcast: %v, want an error saying it was used after Destroy", err)
	}
}

// ReadOnlyBy checks that every process that read the broadcast (Run's
// pids) is one of the run's executors.
func ReadOnlyBy(t testing.TB, readers, executors []int) {
	t.Helper()
	for _, pid := range readers {
		if !slices.Contains(executors, pid) {
			t.Errorf("process %d read the broadcast; the run's executors are %v", pid, executors)
		}
	}
}
