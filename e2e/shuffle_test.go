package e2e

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path"
	"sort"
	"strings"
	"testing"
	"time"

	dc "github.com/ory/dockertest/v3/docker"

	"github.com/flint-mesos/flint/examples/wordcount"
)

// eventDir is where the shuffle test's drivers write their event logs
// (inside the driver container).
const eventDir = "/tmp/flint-events"

// TestFineShuffleAcrossHosts runs the wordcount example (its bundled
// sample text, 8 map and 4 reduce partitions, every distinct word
// printed) in fine mode from a driver container against a master and two
// agents in their own containers: fine mode runs at most one task per
// agent at a time here (2 cpus: the executor's 0.1 and a task's 1), so
// map outputs land on both agents, and every reduce task fetches the
// blocks of the other agent's map tasks from that agent's Flint executor,
// over the network. The printed counts must equal a count made here of
// the same text, and the driver's event log must show map tasks on both
// agents and reduce tasks that read shuffle bytes remotely.
//
// Coarse mode is not run here: its job starts on the first executor that
// registers, and this small job can end before the second agent's
// executor registers, so where its map outputs land is a race (the
// coarse suites fetch across executor processes in-process instead).
func TestFineShuffleAcrossHosts(t *testing.T) {
	want := expectedWordCount(t)
	c := newCluster(t, 2)
	d := c.submit("driver", "--conf", "flint.mesos.coarse=false", "--conf", "flint.default.parallelism=8",
		"--conf", "flint.eventLog.enabled=true", "--conf", "flint.eventLog.dir="+eventDir,
		"--example", "wordcount", "--", "--top", "100000", "--partitions", "4")
	code, stdout, stderr := d.wait(driverTimeout)
	if code != 0 {
		t.Fatalf("the driver exited with status %d, want 0; stdout:\n%s", code, stdout)
	}
	if stdout != want {
		t.Fatalf("the driver printed\n%s\nwant (counted in the test)\n%s", head(stdout), head(want))
	}
	tasks := c.shuffleTasks(d)
	mapHosts, remote, reduces := map[string]bool{}, int64(0), 0
	for _, tk := range tasks {
		if tk.end.ShuffleWriteBytes > 0 {
			mapHosts[tk.host] = true
		}
		if tk.end.ShuffleReadBytes > 0 {
			reduces++
			remote += tk.end.ShuffleRead.RemoteBytes
		}
	}
	for _, a := range c.agents {
		if !mapHosts[a.name] {
			t.Fatalf("no map task wrote shuffle output on %s (map outputs on %v)", a.name, mapHosts)
		}
	}
	if reduces == 0 || remote == 0 {
		t.Fatalf("%d reduce tasks read %d bytes from remote executors, want some reduce tasks with remote reads", reduces, remote)
	}
	t.Logf("map outputs on %v; %d reduce tasks read %d bytes from the other agent", mapHosts, reduces, remote)
	c.checkFrameworkDone(frameworkID(t, stderr), -1, c.agents)
	for _, a := range c.agents {
		c.waitNoExecutors(a)
	}
}

// expectedWordCount is what `wordcount --top 100000` prints for its
// bundled sample text, counted here with the example's tokenizer.
func expectedWordCount(t *testing.T) string {
	t.Helper()
	text, err := os.ReadFile("../examples/wordcount/sample.txt")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	var r wordcount.Result
	for _, line := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
		wordcount.Words(line, func(w string) { counts[w]++; r.Words++ })
	}
	for w, n := range counts {
		r.Top = append(r.Top, wordcount.WordCount{Word: w, Count: n})
	}
	r.Distinct = int64(len(counts))
	sort.Slice(r.Top, func(i, j int) bool { return wordcount.Before(r.Top[i], r.Top[j]) })
	var buf bytes.Buffer
	if err := wordcount.Print(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func head(s string) string {
	if lines := strings.SplitAfter(s, "\n"); len(lines) > 30 {
		return strings.Join(lines[:30], "") + "…\n"
	}
	return s
}

// loggedTask is a task's start host and end, from an event log.
type loggedTask struct {
	host string
	end  struct {
		State                               string
		ShuffleReadBytes, ShuffleWriteBytes int64
		ShuffleRead                         struct{ RemoteBytes int64 }
	}
}

// shuffleTasks reads the finished driver's event log out of its
// container: every finished task with the host it started on.
func (c *cluster) shuffleTasks(d *driver) []loggedTask {
	c.t.Helper()
	var buf bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.pool.Client.DownloadFromContainer(d.n.id, dc.DownloadFromContainerOptions{Path: eventDir,
		OutputStream: &buf, Context: ctx}); err != nil {
		c.t.Fatalf("copying the driver's event log %s: %v", eventDir, err)
	}
	byID := map[uint64]*loggedTask{}
	var order []uint64
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			c.t.Fatalf("reading the event log's archive: %v", err)
		}
		if h.Typeflag != tar.TypeReg || !strings.HasSuffix(path.Base(h.Name), ".jsonl") {
			continue
		}
		sc := bufio.NewScanner(tr)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var rec struct {
				Event string
				Body  json.RawMessage
			}
			var id struct {
				TaskID uint64
				Host   string
			}
			if json.Unmarshal(sc.Bytes(), &rec) != nil || (rec.Event != "TaskStart" && rec.Event != "TaskEnd") {
				continue
			}
			if err := json.Unmarshal(rec.Body, &id); err != nil {
				c.t.Fatalf("event log line %s: %v", sc.Bytes(), err)
			}
			tk := byID[id.TaskID]
			if tk == nil {
				tk = &loggedTask{}
				byID[id.TaskID] = tk
				order = append(order, id.TaskID)
			}
			if rec.Event == "TaskStart" {
				tk.host = id.Host
			} else if err := json.Unmarshal(rec.Body, &tk.end); err != nil {
				c.t.Fatalf("event log line %s: %v", sc.Bytes(), err)
			}
		}
		if err := sc.Err(); err != nil {
			c.t.Fatalf("reading %s: %v", h.Name, err)
		}
	}
	var out []loggedTask
	for _, id := range order {
		if tk := byID[id]; tk.end.State == "FINISHED" {
			out = append(out, *tk)
		}
	}
	if len(out) == 0 {
		c.t.Fatalf("the driver's event log under %s lists no finished task", eventDir)
	}
	return out
}
