package dataset_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/internal/testkit/stagecheck"
)

// A word count's TaskEnd events carry its shuffle: every map task wrote
// records and bytes, every reduce task read blocks, and the bytes the
// maps wrote are exactly the bytes the reduces read.
func TestWordCountTaskEndsCarryShuffleMetrics(t *testing.T) {
	dir := t.TempDir()
	var text strings.Builder
	const words = 4000
	for i := range words {
		fmt.Fprintf(&text, "m%d", (i*7919)%401)
		if i%13 == 0 {
			text.WriteString("\n")
		} else {
			text.WriteString(" ")
		}
	}
	path := filepath.Join(dir, "metrics.txt")
	writeFile(t, path, text.String())

	rec := &stagecheck.TaskEnds{}
	cfg := framework.NewConfig()
	for k, v := range map[string]string{"flint.master": "local[2]", "flint.files.maxPartitionBytes": "2003"} {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log), framework.WithListener(rec))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wordCountJob.Run(context.Background(), fc, wcArgs{Paths: []string{path}, Parts: 3}); err != nil {
		fc.Stop(context.Background())
		t.Fatal(err)
	}
	if err := fc.Stop(context.Background()); err != nil { // Stop drains the bus
		t.Fatal(err)
	}
	if got := len(wcOut[path].v); got != 401 {
		t.Fatalf("word count found %d distinct words, want 401", got)
	}

	// the word count's map stage (writing the shuffle), then its result
	// stage (reading it)
	stages := rec.Submitted()
	if len(stages) != 2 {
		t.Fatalf("stages submitted: %v, want a map stage and a result stage", stages)
	}
	var maps, reduces int
	var written, read, records int64
	for _, e := range rec.Ends() {
		if e.State != "FINISHED" {
			t.Fatalf("task %d of stage %d ended %s: %s", e.TaskID, e.StageID, e.State, e.Reason)
		}
		if e.StageID == stages[1] {
			reduces++
			r := e.ShuffleRead
			if e.ShuffleWriteBytes != 0 || e.ShuffleWrite.Records != 0 {
				t.Errorf("reduce task %d wrote shuffle output: %+v", e.TaskID, e)
			}
			if e.ShuffleReadBytes <= 0 || r.LocalBlocks <= 0 || r.LocalBytes != e.ShuffleReadBytes {
				t.Errorf("reduce task %d: read %d bytes, %+v; want local blocks and bytes (local mode reads files)", e.TaskID, e.ShuffleReadBytes, r)
			}
			if r.RemoteBlocks != 0 || r.RemoteBytes != 0 {
				t.Errorf("reduce task %d fetched remotely in local mode: %+v", e.TaskID, r)
			}
			read += e.ShuffleReadBytes
			continue
		}
		maps++
		if e.ShuffleWriteBytes <= 0 || e.ShuffleWrite.Records <= 0 {
			t.Errorf("map task %d: wrote %d bytes, %+v; want records and bytes", e.TaskID, e.ShuffleWriteBytes, e.ShuffleWrite)
		}
		if e.ShuffleReadBytes != 0 || e.ShuffleRead.LocalBlocks != 0 {
			t.Errorf("map task %d read shuffle blocks: %+v", e.TaskID, e.ShuffleRead)
		}
		written += e.ShuffleWriteBytes
		records += e.ShuffleWrite.Records
	}
	if maps < 2 || reduces != 3 {
		t.Fatalf("%d map and %d reduce tasks ended, want several maps and 3 reduces", maps, reduces)
	}
	// records written after the map-side combine (as Spark counts them):
	// one per distinct word of each map task
	if records < 401 || records >= words || records > int64(maps)*401 {
		t.Errorf("map tasks (%d) wrote %d records, want one per distinct word of each: between 401 and %d", maps, records, maps*401)
	}
	if written != read {
		t.Errorf("map tasks wrote %d shuffle bytes, reduce tasks read %d", written, read)
	}
}
