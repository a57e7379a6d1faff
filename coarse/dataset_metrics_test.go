package coarse_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/stagecheck"
)

var metricsWordCount = dataset.Job("coarse_test.metrics-wordcount", func(b *dataset.Builder, paths []string) error {
	words := dataset.FlatMap(dataset.TextFile(b, paths...), func(l string, yield func(dataset.KV[string, int64])) {
		for _, w := range strings.Fields(l) {
			yield(dataset.KV[string, int64]{Key: w, Value: 1})
		}
	})
	_, err := dataset.Collect(dataset.ReduceByKey(words, func(x, y int64) int64 { return x + y }, 4))
	return err
})

// On coarse executors a word count's map tasks report what they wrote
// and its reduce tasks what they read from the executors' shuffle stores
// (same-host reads or fetches): the two sides agree to the byte, and the
// records written are the words of the input.
func TestDatasetTaskEndsCarryShuffleMetrics(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1", "flint.files.maxPartitionBytes=4096")
	rec := &stagecheck.TaskEnds{}
	r.fc.AddListener(rec)
	var text strings.Builder
	const words = 12000
	for i := range words {
		fmt.Fprintf(&text, "w%d", (i*7919)%1009)
		if i%9 == 8 {
			text.WriteString("\n")
		} else {
			text.WriteString(" ")
		}
	}
	in := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(in, []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if _, err := metricsWordCount.Run(ctx, r.fc, []string{in}); err != nil {
		t.Fatal(err)
	}
	if err := r.fc.Stop(context.Background()); err != nil { // Stop drains the bus
		t.Fatal(err)
	}
	stages := rec.Submitted()
	if len(stages) != 2 {
		t.Fatalf("stages submitted: %v, want a map stage and a result stage", stages)
	}
	var maps, reduces int
	var written, read, records, remote int64
	for _, e := range rec.Ends() {
		if e.State != "FINISHED" {
			t.Fatalf("task %d of stage %d ended %s: %s", e.TaskID, e.StageID, e.State, e.Reason)
		}
		if e.StageID == stages[1] {
			reduces++
			rd := e.ShuffleRead
			if e.ShuffleWriteBytes != 0 || rd.LocalBlocks+rd.RemoteBlocks == 0 || rd.LocalBytes+rd.RemoteBytes != e.ShuffleReadBytes || e.ShuffleReadBytes <= 0 {
				t.Errorf("reduce task %d: wrote %d, read %d bytes as %+v", e.TaskID, e.ShuffleWriteBytes, e.ShuffleReadBytes, rd)
			}
			read += e.ShuffleReadBytes
			remote += rd.RemoteBytes
			continue
		}
		maps++
		if e.ShuffleWriteBytes <= 0 || e.ShuffleWrite.Records <= 0 || e.ShuffleReadBytes != 0 {
			t.Errorf("map task %d: wrote %d bytes (%+v), read %d", e.TaskID, e.ShuffleWriteBytes, e.ShuffleWrite, e.ShuffleReadBytes)
		}
		written += e.ShuffleWriteBytes
		records += e.ShuffleWrite.Records
	}
	if maps < 2 || reduces != 4 {
		t.Fatalf("%d map and %d reduce tasks ended, want several maps and 4 reduces", maps, reduces)
	}
	t.Logf("%d map tasks wrote %d records, %d bytes; %d reduce tasks read %d bytes, %d of them fetched remotely", maps, records, written, reduces, read, remote)
	if records != words {
		t.Errorf("map tasks wrote %d records, want one per word: %d", records, words)
	}
	if written != read {
		t.Errorf("map tasks wrote %d shuffle bytes, reduce tasks read %d", written, read)
	}
}
