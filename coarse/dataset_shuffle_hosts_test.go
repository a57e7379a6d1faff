package coarse_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/internal/driverseam"
	"github.com/flint-mesos/flint/internal/testkit/stagecheck"
)

// hostEnds records TaskEnds and where each executor runs.
type hostEnds struct {
	stagecheck.TaskEnds
	mu     sync.Mutex
	hostOf map[string]string
}

func (r *hostEnds) OnEvent(e event.Event) {
	if a, ok := e.(event.ExecutorAdded); ok {
		r.mu.Lock()
		r.hostOf[a.ExecutorID] = a.Host
		r.mu.Unlock()
	}
	r.TaskEnds.OnEvent(e)
}

// appShuffleFiles lists what executors of the application left below the
// agents' work directories: their shuffle directories (flint-shuffle-*)
// and dataset stores (flint-dataset-*). Agents' checkpoints (meta) are not
// walked; what an agent deletes meanwhile is skipped.
func appShuffleFiles(t *testing.T, workDirs ...string) []string {
	t.Helper()
	var found []string
	for _, dir := range workDirs {
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			switch {
			case errors.Is(err, fs.ErrNotExist):
				return nil
			case err != nil:
				return err
			case d.IsDir() && d.Name() == "meta":
				return filepath.SkipDir
			case strings.HasPrefix(d.Name(), "flint-shuffle-") || strings.HasPrefix(d.Name(), "flint-dataset-"):
				found = append(found, p)
				if d.IsDir() {
					return filepath.SkipDir
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return found
}

// shuffleFilesIn lists the committed map outputs (.data files) below the
// shuffle directories found.
func shuffleFilesIn(t *testing.T, dirs []string) []string {
	t.Helper()
	var out []string
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".data") && !strings.HasPrefix(e.Name(), ".") {
				out = append(out, p)
			}
			return nil
		})
	}
	return out
}

// With executors on two hosts, a word count's reduce tasks fetch the
// blocks of map outputs on the other host over the network: their TaskEnds
// carry remote blocks and bytes and the time they waited for them, local
// and remote bytes add up to what the map tasks wrote. When the run ends,
// the driver releases its shuffles and the executors delete their outputs
// while the application goes on; when the application ends, the executors
// delete their shuffle directories before they exit: nothing of the
// application is left in the sandboxes.
func TestDatasetRemoteFetchMetricsAndShuffleCleanup(t *testing.T) {
	workA, workB := t.TempDir(), t.TempDir()
	c := startCluster(t, clusterOpts{agents: 1, resources: "cpus:2;mem:1024;disk:1024;ports:[31000-31100]", workDir: workA})
	hostAgentIn(t, c, "fetch-host-b", workB)()
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1", "flint.files.maxPartitionBytes=2048")
	rec := &hostEnds{hostOf: map[string]string{}}
	r.fc.AddListener(rec)
	waitFor(t, 20*time.Second, "4 registered executors on 2 hosts", func() bool { return r.fc.DefaultParallelism() == 4 })
	var text strings.Builder
	const words = 20000
	for i := range words {
		fmt.Fprintf(&text, "w%d", (i*7919)%2003)
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
	gate := filepath.Join(t.TempDir(), "gate")
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
	// Opening the FIFO for writing returns once reduce partition 0 opened
	// it: every map output is committed and the run is still going.
	w, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	dirs := appShuffleFiles(t, workA, workB)
	outs := shuffleFilesIn(t, dirs)
	if len(outs) == 0 {
		t.Fatalf("no committed map output below the agents' work directories while the run is going (found %v)", dirs)
	}
	w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The run ended: the driver released its shuffle namespace, and the
	// executors (still running) delete its outputs.
	waitFor(t, 10*time.Second, "the executors to delete the ended run's map outputs", func() bool {
		return len(shuffleFilesIn(t, appShuffleFiles(t, workA, workB))) == 0
	})
	if len(appShuffleFiles(t, workA, workB)) == 0 {
		t.Fatal("the executors' shuffle directories are gone while the application runs")
	}
	if err := r.fc.Stop(context.Background()); err != nil { // Stop drains the bus and waits for the executors
		t.Fatal(err)
	}
	if left := appShuffleFiles(t, workA, workB); len(left) != 0 {
		t.Errorf("after the application ended its executors left %v", left)
	}

	stages := rec.Submitted()
	if len(stages) != 2 {
		t.Fatalf("stages submitted: %v, want a map stage and a result stage", stages)
	}
	t.Logf("%d committed map outputs while the run was going", len(outs))
	mapHosts := map[string]bool{}
	var written, read, remote, local, remoteBlocks int64
	reduces := 0
	for _, e := range rec.Ends() {
		if e.State != "FINISHED" {
			t.Fatalf("task %d of stage %d ended %s: %s", e.TaskID, e.StageID, e.State, e.Reason)
		}
		host := rec.hostOf[e.ExecutorID]
		if host == "" {
			t.Fatalf("task %d ran on executor %s, which no ExecutorAdded named", e.TaskID, e.ExecutorID)
		}
		if e.StageID != stages[1] {
			mapHosts[host] = true
			written += e.ShuffleWriteBytes
			continue
		}
		reduces++
		rd := e.ShuffleRead
		if rd.LocalBytes+rd.RemoteBytes != e.ShuffleReadBytes {
			t.Errorf("reduce task %d on %s: local %d + remote %d bytes, but read %d", e.TaskID, host, rd.LocalBytes, rd.RemoteBytes, e.ShuffleReadBytes)
		}
		if rd.RemoteBlocks > 0 && (rd.RemoteBytes <= 0 || rd.FetchWait <= 0) {
			t.Errorf("reduce task %d on %s fetched %d remote blocks: %d bytes, fetch wait %v", e.TaskID, host, rd.RemoteBlocks, rd.RemoteBytes, rd.FetchWait)
		}
		read += e.ShuffleReadBytes
		remote += rd.RemoteBytes
		local += rd.LocalBytes
		remoteBlocks += rd.RemoteBlocks
	}
	t.Logf("maps on %v wrote %d bytes; %d reduce tasks read %d locally and %d remotely in %d remote blocks", mapHosts, written, reduces, local, remote, remoteBlocks)
	if len(mapHosts) != 2 {
		t.Fatalf("map tasks ran on %v: the test needs both hosts", mapHosts)
	}
	if reduces != 4 || written != read {
		t.Errorf("%d reduce tasks read %d bytes; map tasks wrote %d", reduces, read, written)
	}
	// every reduce task reads blocks of map outputs on both hosts, so each
	// fetches some over the network and reads some from disk
	if remoteBlocks == 0 || remote == 0 || local == 0 {
		t.Errorf("remote blocks %d, remote bytes %d, local bytes %d: want all three > 0", remoteBlocks, remote, local)
	}
}

// Context.ReleaseShuffle of a job of stages' shuffles makes the executors
// delete their outputs while the application runs; a later job over the
// same lineage recomputes them and gets the same result.
func TestReleasedStageShufflesAreDeletedOnTheExecutors(t *testing.T) {
	work := t.TempDir()
	c := startCluster(t, clusterOpts{workDir: work})
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1")
	st := stagecheck.Listen(r.fc)
	waitFor(t, 60*time.Second, "two executors", func() bool { return st.Executors() >= 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	stagecheck.Run(ctx, t, r.fc, 0, 1)
	outputsOf := func(shuffleID int) int {
		n := 0
		for _, p := range shuffleFilesIn(t, appShuffleFiles(t, work)) {
			if filepath.Base(filepath.Dir(p)) == fmt.Sprintf("shuffle_%d", shuffleID) {
				n++
			}
		}
		return n
	}
	if a, b := outputsOf(0), outputsOf(1); a != 4 || b != 3 {
		t.Fatalf("%d outputs of shuffle 0 and %d of shuffle 1 on the executors, want 4 and 3 (one per map task)", a, b)
	}
	if !driverseam.Of(r.fc).Driver.ReleaseShuffle(0) {
		t.Fatal("shuffle 0 not released")
	}
	waitFor(t, 10*time.Second, "the executors to delete shuffle 0's outputs", func() bool { return outputsOf(0) == 0 })
	if outputsOf(1) != 3 {
		t.Fatalf("shuffle 1's outputs after shuffle 0's release: %d, want 3", outputsOf(1))
	}
	if !driverseam.Of(r.fc).Driver.ReleaseShuffle(1) {
		t.Fatal("shuffle 1 not released")
	}
	waitFor(t, 10*time.Second, "the executors to delete shuffle 1's outputs", func() bool { return outputsOf(1) == 0 })
	stagecheck.Run(ctx, t, r.fc, 0, 1) // recomputed, same result
	if a, b := outputsOf(0), outputsOf(1); a != 4 || b != 3 {
		t.Fatalf("after the second job: %d and %d outputs, want 4 and 3", a, b)
	}
}
