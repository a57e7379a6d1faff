package driver

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// orderBackend is an executor that records, in the order the driver loop
// applies them, the launches and kills it receives, and checks on arrival
// that every kill names a task it was launched.
type orderBackend struct {
	d        backend.Driver
	mu       sync.Mutex
	launched map[uint64]bool
	kills    int
	early    []string // kills that arrived before their launch
}

func (b *orderBackend) Start(_ context.Context, d backend.Driver) error {
	b.d = d
	d.ExecutorUp("e1", "h1", 1000)
	return nil
}

func (b *orderBackend) Apply(batch backend.Batch) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range batch.Kills {
		b.kills++
		if !b.launched[k.TaskID] {
			b.early = append(b.early, fmt.Sprintf("kill of task %d before its launch", k.TaskID))
		}
	}
	for _, td := range batch.Launches {
		b.launched[td.TaskID] = true
	}
}

func (b *orderBackend) FetchResult(context.Context, string, string) ([]byte, error) {
	return nil, fmt.Errorf("no results")
}
func (b *orderBackend) DefaultParallelism() int      { return 1000 }
func (b *orderBackend) Stop(_ context.Context) error { return nil }

// TestKillNeverOvertakesItsLaunch submits jobs from many goroutines and
// cancels each right after its tasks were placed, while other jobs come
// and go: every kill the executor receives names a task it was already
// launched, because one goroutine makes and applies every effect in order.
// (Before the driver loop, the launches of one locked section and the
// kills of another were flushed by different goroutines in any order.)
func TestKillNeverOvertakesItsLaunch(t *testing.T) {
	sched, err := scheduler.New(scheduler.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	bus := event.NewBus(0)
	defer bus.Close()
	b := &orderBackend{launched: map[uint64]bool{}}
	d := newDriver(sched, time.Now, bus, log)
	d.backend = b
	if err := b.Start(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	d.start(10 * time.Millisecond)
	defer d.stop()

	const workers, jobs = 8, 25
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				job := &Job{Name: fmt.Sprintf("w%d-j%d", w, j), Tasks: make([]Task, 3)}
				js, err := d.submit(job)
				if err != nil {
					t.Error(err)
					return
				}
				// Cancel at once: the submit's step placed the tasks and
				// the executor is being handed their launches.
				d.cancel(js, fmt.Errorf("cancelled right after launch"))
				<-js.done
				if js.err == nil {
					t.Errorf("job %s ended without error after its cancellation", job.Name)
				}
			}
		}()
	}
	wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.early) > 0 {
		t.Fatalf("%d kills reached the executor before their launch, e.g. %s", len(b.early), b.early[0])
	}
	if b.kills < workers*jobs {
		t.Fatalf("the executor got %d kills, want at least one per job (%d): the jobs' tasks were not running when cancelled", b.kills, workers*jobs)
	}
}
