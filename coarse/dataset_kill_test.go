package coarse_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/dataset"
)

type gatedArgs struct {
	Paths []string
	Gate  string // a FIFO the result task of partition 0 reads to its end
}

var gatedOut = map[string]map[string]int64{}
var gatedRecords = map[string]int64{}

// gatedWordCount counts words; the result task of partition 0 first reads
// Gate to its end, so the test holds the job there, mid-flight, and an
// accumulator counts the records the result stage saw.
var gatedWordCount = dataset.Job("coarse_test.gated-wordcount", func(b *dataset.Builder, a gatedArgs) error {
	seen := dataset.Counter(b, "result records")
	words := dataset.FlatMap(dataset.TextFile(b, a.Paths...), func(l string, yield func(dataset.KV[string, int64])) {
		for _, w := range strings.Fields(l) {
			yield(dataset.KV[string, int64]{Key: w, Value: 1})
		}
	})
	counts := dataset.ReduceByKey(words, func(x, y int64) int64 { return x + y }, 4)
	gated := dataset.MapPartitions(counts, func(part int, records func(func(dataset.KV[string, int64]) bool), yield func(dataset.KV[string, int64])) error {
		if part == 0 {
			data, err := os.ReadFile(a.Gate)
			if err != nil {
				return err
			}
			if len(data) != 0 {
				return fmt.Errorf("gate %s: want no data, got %q", a.Gate, data)
			}
		}
		records(func(kv dataset.KV[string, int64]) bool { seen.Add(1); yield(kv); return true })
		return nil
	})
	kvs, err := dataset.Collect(gated)
	if err != nil {
		return err
	}
	if b.Driver() {
		m := map[string]int64{}
		for _, kv := range kvs {
			m[kv.Key] += kv.Value
		}
		gatedOut[a.Gate], gatedRecords[a.Gate] = m, seen.Value()
	}
	return nil
})

// An executor process killed while it runs a result task of a dataset
// job (and holds map outputs) costs a retry, not the result: the counts
// are exact, and the accumulator counts each partition once.
func TestDatasetExecutorKilledMidJob(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1", "flint.files.maxPartitionBytes=4096", "flint.task.maxFailures=4",
		"flint.excludeOnFailure.enabled=false")
	dir := t.TempDir()
	var text strings.Builder
	want := map[string]int64{}
	for i := range 20000 {
		w := fmt.Sprintf("w%d", (i*7919)%1009)
		want[w]++
		text.WriteString(w)
		if i%9 == 8 {
			text.WriteString("\n")
		} else {
			text.WriteString(" ")
		}
	}
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	gate := filepath.Join(dir, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := gatedWordCount.Run(ctx, r.fc, gatedArgs{Paths: []string{in}, Gate: gate})
		done <- err
	}()
	// Opening the FIFO for writing returns once the gated task opened it
	// for reading: the job is mid-flight, its map stage done.
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
	case err := <-done:
		t.Fatalf("the job ended (%v) before its gated task ran", err)
	}
	// The executor reading the gate is the victim.
	var victim proc
	for _, p := range r.executors() {
		if holds(p.pid, gate) {
			victim = p
		}
	}
	if victim.pid == 0 {
		t.Fatal("no executor process holds the gate open")
	}
	// Later attempts read a regular empty file; then kill the victim while
	// its task is blocked, and release nothing to it.
	tmp := gate + ".file"
	if err := os.WriteFile(tmp, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, gate); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(victim.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := <-done; err != nil {
		t.Fatalf("the job failed after executor %s was killed: %v", victim.executorID, err)
	}
	if got := gatedOut[gate]; !maps.Equal(got, want) {
		t.Fatalf("%d distinct words counted, want %d (counts differ)", len(got), len(want))
	}
	if n := gatedRecords[gate]; n != int64(len(want)) {
		t.Fatalf("the result stage's accumulator counted %d records, want %d (once per partition)", n, len(want))
	}
	waitFor(t, 10*time.Second, "the victim's loss to be logged", func() bool {
		return strings.Contains(r.logs.String(), "executor "+victim.executorID+" lost")
	})
}

// holds reports whether process pid has path open.
func holds(pid int, path string) bool {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && l == path {
			return true
		}
	}
	return false
}
