package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// A checkpoint write that takes long (a busy disk) holds up only what must
// wait for it: while the run record of a checkpointing framework's command
// task is being written, the agent answers a ping and the task runs to
// TASK_FINISHED, its updates reaching the master. Written under the
// agent's lock, the record held the inbox (the ping unanswered), every
// update, and even the master's Deliver until the disk was done.
func TestSlowCheckpointWriteBlocksNothingElse(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var enterOnce, releaseOnce sync.Once
	testHookCheckpointWrite = func(path string) {
		if filepath.Base(path) != "run.json" {
			return
		}
		enterOnce.Do(func() { close(entered) })
		<-release
	}
	t.Cleanup(func() { testHookCheckpointWrite = nil }) // after the agent's Close: its writer has ended
	m := newFakeMaster()
	a := startAgent(t, m, fastConfig(t, t.TempDir()))
	unblock := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(unblock) // before the agent's Close, which writes what is queued

	runTask(t, a, fwInfo("ck", true), cmdTask("c", "true"))
	select {
	case <-entered:
	case <-time.After(20 * time.Second):
		t.Fatal("the run record was never written")
	}
	// Deliver itself took the agent's lock, so the master (which delivers
	// under its own lock) stalled too: deliver from a goroutine.
	delivered := make(chan error, 1)
	go func() { delivered <- a.Deliver(link.MasterMessage{Ping: &link.Ping{Seq: 7}}) }()
	waitfor.True(t, 20*time.Second, "the pong while a checkpoint write is held", func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return slices.Contains(m.pongs, 7)
	})
	if err := <-delivered; err != nil {
		t.Fatal(err)
	}
	m.waitState(t, "c", mesos.TASK_FINISHED)
	waitfor.True(t, 20*time.Second, "every update acknowledged", func() bool { return len(a.sum.Snapshot()) == 0 })
	unblock()
	a.ckpt.sync()
	// The updates were acknowledged before their checkpoint was written:
	// the file still says, once, that none is pending.
	var ups []link.StatusUpdate
	b, err := os.ReadFile(filepath.Join(a.workDir, "meta/slaves/S1/updates.json"))
	if err != nil || json.Unmarshal(b, &ups) != nil || len(ups) != 0 {
		t.Fatalf("updates checkpoint after every acknowledgement: %s %v", b, err)
	}
}

// Changes reach the disk in the order they were made: a record rewritten
// while its first write is queued is written once, with the newer
// content; a removal queued after a write wins over it, and a write
// queued after the removal recreates the file.
func TestCheckpointWriterKeepsOrder(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var writes []string
	hold := make(chan struct{})
	testHookCheckpointWrite = func(path string) {
		if filepath.Base(path) == "first.json" {
			<-hold
		}
		mu.Lock()
		writes = append(writes, filepath.Base(path))
		mu.Unlock()
	}
	t.Cleanup(func() { testHookCheckpointWrite = nil })
	updates := 0
	w := newCheckpointWriter(fastConfig(t, dir).Logger, func() { updates++ })
	defer w.close()
	sub := filepath.Join(dir, "sub")
	w.write(filepath.Join(dir, "first.json"), []byte(`1`)) // holds the writer
	w.write(filepath.Join(sub, "a.json"), []byte(`"old"`))
	w.write(filepath.Join(sub, "a.json"), []byte(`"new"`))
	w.updatesChanged()
	w.updatesChanged()
	w.removeAll(sub)
	w.write(filepath.Join(sub, "b.json"), []byte(`2`))
	close(hold)
	w.sync()
	mu.Lock()
	got := slices.Clone(writes)
	mu.Unlock()
	if want := []string{"first.json", "a.json", "b.json"}; !slices.Equal(got, want) {
		t.Fatalf("writes %v, want %v", got, want)
	}
	if updates != 1 {
		t.Fatalf("updates.json written %d times, want 1 (the second change found the first still queued)", updates)
	}
	if exists(filepath.Join(sub, "a.json")) || !exists(filepath.Join(sub, "b.json")) {
		t.Fatalf("after the removal: a.json kept %v, b.json written %v", exists(filepath.Join(sub, "a.json")), exists(filepath.Join(sub, "b.json")))
	}
}
