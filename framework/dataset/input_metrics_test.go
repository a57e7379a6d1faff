package dataset_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/uistore"
	"github.com/flint-mesos/flint/internal/testkit/stagecheck"
)

// uiFeed is the task recorder and the UI's store, fed the same events.
type uiFeed struct {
	rec   *stagecheck.TaskEnds
	store *uistore.Store
}

func (f uiFeed) OnEvent(e event.Event) { f.rec.OnEvent(e); f.store.OnEvent(e) }

// The Input a word count's tasks report — per task, per stage, in the
// UI's store and REST data — is what they read: over the map stage, the
// input file's size in bytes and its lines in records; the reduce stage
// reads only its shuffle, whose bytes are what the maps wrote.
func TestInputMetricsAreTheBytesAndLinesRead(t *testing.T) {
	dir := t.TempDir()
	var text strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&text, "w%d w%d x\n", i%97, i%13)
	}
	path := filepath.Join(dir, "in.txt")
	writeFile(t, path, text.String())
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	size, lines := st.Size(), int64(3000) // computed without Flint

	feed := uiFeed{rec: &stagecheck.TaskEnds{}, store: uistore.New(uistore.Limits{Jobs: 10, Stages: 10, Tasks: 1000})}
	cfg := framework.NewConfig()
	for k, v := range map[string]string{"flint.master": "local[2]", "flint.files.maxPartitionBytes": "10000"} {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log), framework.WithListener(feed))
	if err != nil {
		t.Fatal(err)
	}
	_, err = wordCountJob.Run(context.Background(), fc, wcArgs{Paths: []string{path}, Parts: 3})
	if serr := fc.Stop(context.Background()); serr != nil {
		t.Fatal(serr)
	}
	if err != nil {
		t.Fatal(err)
	}
	stages := feed.rec.Submitted()
	if len(stages) != 2 {
		t.Fatalf("stages %v, want a map and a result stage", stages)
	}
	var inBytes, inRecords, written, read int64
	var maps int
	for _, e := range feed.rec.Ends() {
		if e.StageID == stages[0] {
			maps++
			inBytes, inRecords, written = inBytes+e.InputSize, inRecords+e.InputRecords, written+e.ShuffleWriteBytes
			if e.InputSize <= 0 || e.InputSize > 10000+20 {
				t.Errorf("map task %d read %d bytes of a split of at most 10000", e.TaskID, e.InputSize)
			}
		} else {
			read += e.ShuffleReadBytes
			if e.InputSize != 0 || e.InputRecords != 0 {
				t.Errorf("reduce task %d reports input %d bytes, %d records; it reads only its shuffle", e.TaskID, e.InputSize, e.InputRecords)
			}
		}
	}
	if want := int((size + 9999) / 10000); maps != want {
		t.Errorf("%d map tasks, want %d splits", maps, want)
	}
	if inBytes != size || inRecords != lines {
		t.Errorf("map tasks read %d bytes, %d records; the file has %d bytes, %d lines", inBytes, inRecords, size, lines)
	}
	if written <= 0 || read != written {
		t.Errorf("shuffle: maps wrote %d bytes, reduces read %d", written, read)
	}

	// the UI's stage and task data (what /api/v1 serves) say the same
	for _, sd := range feed.store.Stages() {
		full, err := feed.store.Stage(uistore.StageKey{ID: sd.StageID, Attempt: sd.AttemptID}, true, sd.CompletionTime.Time)
		if err != nil {
			t.Fatal(err)
		}
		var taskBytes, taskRecords int64
		for _, td := range full.Tasks {
			taskBytes += td.TaskMetrics.InputMetrics.BytesRead
			taskRecords += td.TaskMetrics.InputMetrics.RecordsRead
		}
		wantBytes, wantRecords := int64(0), int64(0)
		if sd.StageID == stages[0] {
			wantBytes, wantRecords = size, lines
		}
		if full.InputBytes != wantBytes || full.InputRecords != wantRecords || taskBytes != wantBytes || taskRecords != wantRecords {
			t.Errorf("UI stage %d: input %d bytes, %d records (tasks: %d, %d); want %d, %d",
				sd.StageID, full.InputBytes, full.InputRecords, taskBytes, taskRecords, wantBytes, wantRecords)
		}
	}
}

// Issue 23, item 4: the Input of tasks reading CRLF text and compressed
// text is what they read from storage, as Spark's input bytes are what a
// task read from the file system. A CRLF file whose last line has no line
// end is read, over its splits, as exactly its size; a gzip file is read
// whole by one task, whose input bytes are the compressed file's size
// (not the decompressed text's) and whose records are its lines. Per
// task, per stage, per executor (the one of local mode) and per job (its
// map stage), in the UI's store as in the events, the figures are the
// files' sizes and line counts computed without Flint.
func TestInputMetricsOfCRLFAndCompressedText(t *testing.T) {
	dir := t.TempDir()
	var crlf, plain strings.Builder
	for i := range 2000 {
		if i > 0 {
			crlf.WriteString("\r\n")
		}
		fmt.Fprintf(&crlf, "w%d w%d x", i%97, i%13)
	}
	for i := range 5000 {
		fmt.Fprintf(&plain, "line %d of a compressed file %d\n", i, i*i)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write([]byte(plain.String())); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	crlfPath, gzPath := filepath.Join(dir, "crlf.txt"), filepath.Join(dir, "lines.txt.gz")
	writeFile(t, crlfPath, crlf.String())
	writeFile(t, gzPath, gz.String())
	crlfSize, gzSize := int64(crlf.Len()), int64(gz.Len())
	if gzSize >= int64(plain.Len()) {
		t.Fatalf("the gzip file (%d bytes) is not smaller than its text (%d)", gzSize, plain.Len())
	}

	feed := uiFeed{rec: &stagecheck.TaskEnds{}, store: uistore.New(uistore.Limits{Jobs: 10, Stages: 10, Tasks: 1000})}
	cfg := framework.NewConfig()
	for k, v := range map[string]string{"flint.master": "local[2]", "flint.files.maxPartitionBytes": "10000"} {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log), framework.WithListener(feed))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{crlfPath, gzPath} {
		if _, err = wordCountJob.Run(context.Background(), fc, wcArgs{Paths: []string{p}, Parts: 2}); err != nil {
			break
		}
	}
	if serr := fc.Stop(context.Background()); serr != nil {
		t.Fatal(serr)
	}
	if err != nil {
		t.Fatal(err)
	}
	stages := feed.rec.Submitted() // map, result of the CRLF job; map, result of the gzip job
	if len(stages) != 4 {
		t.Fatalf("stages %v, want a map and a result stage per job", stages)
	}
	want := map[int][2]int64{stages[0]: {crlfSize, 2000}, stages[2]: {gzSize, 5000}}
	got := map[int][2]int64{}
	gzTasks := 0
	for _, e := range feed.rec.Ends() {
		f := got[e.StageID]
		got[e.StageID] = [2]int64{f[0] + e.InputSize, f[1] + e.InputRecords}
		if e.StageID == stages[2] {
			gzTasks++
			if e.InputSize != gzSize || e.InputRecords != 5000 {
				t.Errorf("the task reading the gzip file reports %d bytes, %d records; the file has %d bytes, 5000 lines", e.InputSize, e.InputRecords, gzSize)
			}
		}
	}
	if gzTasks != 1 {
		t.Errorf("%d tasks read the gzip file, want 1 (a compressed file is not split)", gzTasks)
	}
	for _, s := range stages {
		if got[s] != want[s] {
			t.Errorf("stage %d: tasks read %v (bytes, records), want %v", s, got[s], want[s])
		}
	}

	// the UI's stages, their tasks and per-executor summaries, and the
	// executor's total say the same
	for _, sd := range feed.store.Stages() {
		full, err := feed.store.Stage(uistore.StageKey{ID: sd.StageID, Attempt: sd.AttemptID}, true, sd.CompletionTime.Time)
		if err != nil {
			t.Fatal(err)
		}
		var taskBytes, taskRecords, execBytes int64
		for _, td := range full.Tasks {
			taskBytes += td.TaskMetrics.InputMetrics.BytesRead
			taskRecords += td.TaskMetrics.InputMetrics.RecordsRead
		}
		for _, es := range full.ExecutorSummary {
			execBytes += es.InputBytes
		}
		w := want[sd.StageID]
		if full.InputBytes != w[0] || full.InputRecords != w[1] || taskBytes != w[0] || taskRecords != w[1] || execBytes != w[0] {
			t.Errorf("UI stage %d: input %d bytes, %d records (tasks: %d, %d; executors: %d bytes); want %d, %d",
				sd.StageID, full.InputBytes, full.InputRecords, taskBytes, taskRecords, execBytes, w[0], w[1])
		}
	}
	var execTotal int64
	for _, x := range feed.store.Executors(false) {
		execTotal += x.TotalInputBytes
	}
	if execTotal != crlfSize+gzSize {
		t.Errorf("the executors' total input is %d bytes, want %d (both files' sizes)", execTotal, crlfSize+gzSize)
	}
}

type wholeInputArgs struct{ Dir string }

var wholeLengthsJob = dataset.Job("test.wholelengths", func(b *dataset.Builder, a wholeInputArgs) error {
	files := dataset.WholeTextFiles(b, a.Dir, 2)
	_, err := dataset.Count(files)
	return err
})

// WholeTextFiles reports, as TextFile does, the bytes read from storage: a
// gzip file's compressed size (not its decompressed text) and a plain
// file's size, one record per file.
func TestWholeTextFilesInputIsTheStoredBytes(t *testing.T) {
	dir := t.TempDir()
	text := strings.Repeat("the same words again and again\n", 2000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "a.txt.gz"), gz.String())
	writeFile(t, filepath.Join(dir, "b.txt"), "one file\r\n")
	wantBytes := int64(gz.Len()) + int64(len("one file\r\n"))

	rec := &stagecheck.TaskEnds{}
	cfg := framework.NewConfig()
	if err := cfg.Set("flint.master", "local[2]"); err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log), framework.WithListener(rec))
	if err != nil {
		t.Fatal(err)
	}
	_, err = wholeLengthsJob.Run(context.Background(), fc, wholeInputArgs{Dir: dir})
	if serr := fc.Stop(context.Background()); serr != nil {
		t.Fatal(serr)
	}
	if err != nil {
		t.Fatal(err)
	}
	var gotBytes, gotRecords int64
	for _, e := range rec.Ends() {
		gotBytes += e.InputSize
		gotRecords += e.InputRecords
	}
	if gotBytes != wantBytes || gotRecords != 2 {
		t.Errorf("WholeTextFiles read %d bytes, %d records; the files hold %d bytes (gzip compressed), 2 files", gotBytes, gotRecords, wantBytes)
	}
}
