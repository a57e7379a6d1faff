package fine_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
)

// usedCPUs is the cpus the master counts as used by its frameworks (live
// tasks and executors), from /state.
func usedCPUs(t testing.TB, url string) float64 {
	resp, err := http.Get(url + "/state")
	if err != nil {
		t.Errorf("GET /state: %v", err)
		return 0
	}
	defer resp.Body.Close()
	var st struct {
		Frameworks []struct {
			UsedResources struct {
				CPUs float64 `json:"cpus"`
			} `json:"used_resources"`
		} `json:"frameworks"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Errorf("decode /state: %v", err)
		return 0
	}
	sum := 0.0
	for _, f := range st.Frameworks {
		sum += f.UsedResources.CPUs
	}
	return sum
}

// flint.cores.max bounds the cpus the application holds in fine mode: its
// running tasks' cpus plus its executors' own (as the master counts them),
// while the job still finishes. Tasks waiting behind the cap (with tasks
// running) are not mistaken for tasks no offer fits.
func TestCoresMaxInFineMode(t *testing.T) {
	c := startCluster(t, clusterOpts{}) // 2 agents × 4 cpus: uncapped, 8 cpus could be used
	r := mustRun(t, mesosURL(c), "flint.cores.max=3", "flint.mesos.fine.noFitTimeout=1s")
	var (
		mu   sync.Mutex
		peak float64
	)
	stop := make(chan struct{})
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			u := usedCPUs(t, c.URL())
			mu.Lock()
			peak = max(peak, u)
			mu.Unlock()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	in := make([]int, 16)
	for i := range in {
		in[i] = 300
	}
	out, err := framework.Map(ctx, r.fc, sleepy, in)
	close(stop)
	<-polled
	if err != nil {
		t.Fatalf("job failed under flint.cores.max: %v", err)
	}
	for i, v := range out {
		if v != 300 {
			t.Fatalf("result %d = %d", i, v)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if peak > 3+1e-9 {
		t.Fatalf("the application held %g cpus (tasks + executors), above flint.cores.max=3", peak)
	}
	// One executor (0.5) and two 1-cpu tasks fit under 3: the cap was used,
	// not just respected by running one task at a time.
	if peak < 2.5-1e-9 {
		t.Fatalf("peak %g cpus: the job never ran two tasks at once under flint.cores.max=3", peak)
	}
}
