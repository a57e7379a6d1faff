// Command burst is the e2e suite's dynamic-allocation driver: a Flint
// program (driver and, fetched by the agents, executors alike) that runs
// a wide stage, waits until dynamic allocation has released every
// executor, then runs a second action reading the first one's shuffle
// outputs again — outputs the agents' shuffle services keep.
//
// Its map tasks hold until the driver opens a gate (an HTTP URL on the
// driver the tasks poll), which it does once --executors executors have
// registered: the first burst ramps up to that many before any map task
// ends, so the map outputs are spread over them. Between the actions it
// waits for the release events (the application's executorIdleTimeout,
// short and real here, is what it waits on) unless --wait-release=false
// (without dynamic allocation: the second action then reads the live
// executors' outputs). It prints one JSON object on stdout, its report
// (burstcheck.Report, which owns its form and the suites' checks).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/internal/testkit/burstcheck"
)

// In is the job's input: N records summed by key (i % 101) in 8 map and 4
// reduce partitions; map tasks hold until Gate answers 200.
type In struct {
	N    int
	Gate string
}

// Out is what the two actions collected.
type Out struct{ First, Second []dataset.KV[int, int64] }

// between runs in the driver only, between the two actions; executors
// rebuilding the job's graph find it nil.
var between atomic.Pointer[func() error]

var job = dataset.JobResult("e2e.burst", func(b *dataset.Builder, in In) (Out, error) {
	kvs := make([]dataset.KV[int, int64], in.N)
	for i := range kvs {
		kvs[i] = dataset.KV[int, int64]{Key: i % 101, Value: int64(i)}
	}
	gated := dataset.MapPartitions(dataset.Parallelize(b, kvs, 8), gateThen[dataset.KV[int, int64]](in.Gate))
	sums := dataset.ReduceByKey(gated, func(x, y int64) int64 { return x + y }, 4)
	first, err := dataset.Collect(sums)
	if err != nil {
		return Out{}, err
	}
	if f := between.Load(); f != nil {
		if err := (*f)(); err != nil {
			return Out{}, err
		}
	}
	doubled := dataset.Map(sums, func(kv dataset.KV[int, int64]) dataset.KV[int, int64] {
		return dataset.KV[int, int64]{Key: kv.Key, Value: 2 * kv.Value}
	})
	second, err := dataset.Collect(doubled)
	return Out{first, second}, err
})

// gateThen polls gate until it answers 200, then passes the partition's
// records on.
func gateThen[T any](gate string) func(int, func(func(T) bool), func(T)) error {
	return func(_ int, records func(func(T) bool), yield func(T)) error {
		c := &http.Client{Timeout: 5 * time.Second}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			resp, err := c.Get(gate)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("gate %s not opened within 2 minutes (last: %v)", gate, err)
			}
			time.Sleep(20 * time.Millisecond) // the workload waits; the driver opens the gate on an event
		}
		records(func(r T) bool { yield(r); return true })
		return nil
	}
}

// watch records executors added and removed and the map stage's tasks.
type watch struct {
	mu       sync.Mutex
	mapStage int
	added    []string
	hosts    map[string]string
	removed  map[string]string
	mapTasks int
	mapExecs []string
	failures []string
	changed  chan struct{} // signalled on every executor event
}

func (w *watch) OnEvent(e event.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e := e.(type) {
	case event.ExecutorAdded:
		w.added = append(w.added, e.ExecutorID)
		w.hosts[e.ExecutorID] = e.Host
		w.signal()
	case event.ExecutorRemoved:
		w.removed[e.ExecutorID] = e.Reason
		w.signal()
	case event.StageSubmitted:
		if len(e.ParentIDs) == 0 && w.mapStage < 0 {
			w.mapStage = e.StageID
		}
	case event.TaskEnd:
		if e.StageID == w.mapStage {
			w.mapTasks++
			if e.State == "FINISHED" && !slices.Contains(w.mapExecs, e.ExecutorID) {
				w.mapExecs = append(w.mapExecs, e.ExecutorID)
			}
		}
		if e.State != "FINISHED" {
			w.failures = append(w.failures, fmt.Sprintf("task %d of stage %d on %s %s: %s", e.Index, e.StageID, e.ExecutorID, e.State, e.Reason))
		}
	case event.StageCompleted:
		if e.FailureReason != "" {
			w.failures = append(w.failures, fmt.Sprintf("stage %d: %s", e.StageID, e.FailureReason))
		}
	}
}

func (w *watch) signal() {
	select {
	case w.changed <- struct{}{}:
	default:
	}
}

// await waits until cond holds (checked on every executor event) or the
// timeout passes.
func (w *watch) await(ctx context.Context, timeout time.Duration, what string, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		w.mu.Lock()
		ok := cond()
		w.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-w.changed:
		case <-ctx.Done():
			return fmt.Errorf("burst: waiting for %s: %w", what, ctx.Err())
		}
	}
}

// gate serves 503 until opened, then 200.
type gate struct{ open atomic.Bool }

func (g *gate) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	if !g.open.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
}

func main() {
	flint.Main(run)
}

func run(ctx context.Context, fc *framework.Context, args []string) error {
	fs := flag.NewFlagSet("burst", flag.ContinueOnError)
	executors := fs.Int("executors", 2, "executors the first burst ramps up to before its map tasks proceed")
	host := fs.String("gate-host", "", "the driver's address executors reach its gate at")
	n := fs.Int("n", 20000, "records")
	waitRelease := fs.Bool("wait-release", true, "between the actions, wait until dynamic allocation has released every executor")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *host == "" {
		return errors.New("burst: --gate-host is required")
	}
	lis, err := net.Listen("tcp", net.JoinHostPort(*host, "0"))
	if err != nil {
		return fmt.Errorf("burst: gate: %w", err)
	}
	g := &gate{}
	srv := &http.Server{Handler: g, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(lis) }()
	defer srv.Close()

	w := &watch{mapStage: -1, hosts: map[string]string{}, removed: map[string]string{}, changed: make(chan struct{}, 1)}
	fc.AddListener(w)
	go func() {
		err := w.await(ctx, 2*time.Minute, "the first burst's executors", func() bool { return len(w.added) >= *executors })
		if err == nil {
			g.open.Store(true)
		}
	}()
	var first int
	wait := func() error {
		w.mu.Lock()
		first = len(w.added)
		w.mu.Unlock()
		if !*waitRelease {
			return nil
		}
		return w.await(ctx, 2*time.Minute, "every executor released", func() bool { return len(w.removed) == len(w.added) })
	}
	between.Store(&wait)
	out, err := job.Run(ctx, fc, In{N: *n, Gate: "http://" + lis.Addr().String() + "/gate"})
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return json.NewEncoder(os.Stdout).Encode(burstcheck.Report{First: out.First, Second: out.Second,
		AddedFirst: w.added[:first], AddedSecond: w.added[first:], Hosts: w.hosts, Removed: w.removed,
		MapTasks: w.mapTasks, MapExecutors: w.mapExecs, Failures: w.failures})
}
