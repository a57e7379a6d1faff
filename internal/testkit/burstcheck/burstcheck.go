package burstcheck

import (
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/dataset"
)

// Report is what the burst driver prints, one JSON object on its last
// line of stdout: the collected sums, the executors added per action,
// each executor's host, why each was removed, how many tasks of the map
// stage ended and on which executors they finished, and every failed
// task or stage.
type Report struct {
	First, Second []dataset.KV[int, int64]
	AddedFirst    []string
	AddedSecond   []string
	Hosts         map[string]string // executor → host
	Removed       map[string]string // executor → reason
	MapTasks      int
	MapExecutors  []string // distinct, in the order their first map task finished
	Failures      []string
}

// MapTasks is how many tasks the burst job's map stage has.
const MapTasks = 8

// Released is the removal reason of an executor dynamic allocation
// released after executorIdleTimeout.
const Released = "released by dynamic allocation: idle past executorIdleTimeout"

// Parse reads the report from the driver's stdout (its last line).
func Parse(stdout string) (Report, error) {
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var r Report
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		return Report{}, fmt.Errorf("burstcheck: the driver's report: %w\nstdout:\n%s", err, stdout)
	}
	return r, nil
}

// CheckSums checks the sums of a run over n records (keys i % 101):
// plain Go's in the first action, doubled in the second.
func CheckSums(t testing.TB, r Report, n int) {
	t.Helper()
	want := map[int]int64{}
	for i := range n {
		want[i%101] += int64(i)
	}
	for i, kvs := range [][]dataset.KV[int, int64]{r.First, r.Second} {
		got := map[int]int64{}
		for _, kv := range kvs {
			got[kv.Key] = kv.Value
		}
		scaled := map[int]int64{}
		for k, v := range want {
			scaled[k] = v * int64(i+1)
		}
		if !maps.Equal(got, scaled) {
			t.Errorf("action %d: sums %v, want (plain Go) %v", i+1, got, scaled)
		}
	}
}

// CheckReleased checks what a run with dynamic allocation and the
// shuffle service must show: the first action ran on executors
// executors (maxExecutors), each released after executorIdleTimeout; the
// second on new executors; the map stage ended its tasks once (the
// released executors' outputs were read, nothing recomputed); no task or
// stage failed.
func CheckReleased(t testing.TB, r Report, executors int) {
	t.Helper()
	if len(r.AddedFirst) != executors {
		t.Errorf("the first action ran on executors %v, want %d (maxExecutors)", r.AddedFirst, executors)
	}
	for _, id := range r.AddedFirst {
		if why := r.Removed[id]; why != Released {
			t.Errorf("executor %s removed for %q, want its release after executorIdleTimeout", id, why)
		}
	}
	if len(r.AddedSecond) == 0 {
		t.Errorf("no executor launched for the second action (all were released)")
	}
	if r.MapTasks != MapTasks {
		t.Errorf("the map stage ended %d tasks, want its %d, once (nothing recomputed)", r.MapTasks, MapTasks)
	}
	if len(r.Failures) > 0 {
		t.Errorf("failures:\n%s", strings.Join(r.Failures, "\n"))
	}
}
