package dataset_test

import (
	"context"
	"os"
	"testing"

	"github.com/flint-mesos/flint/internal/testkit/broadcastcheck"
)

func TestBroadcastIsReadOncePerExecutor(t *testing.T) {
	fc := localContext(t)
	pids := broadcastcheck.Run(context.Background(), t, fc, broadcastcheck.Args{Size: 8 << 20, Tasks: 16, Seed: 1})
	if len(pids) != 1 || pids[0] != os.Getpid() {
		t.Fatalf("read in processes %v, want only this one (local mode's executor)", pids)
	}
}

func TestDestroyedBroadcast(t *testing.T) {
	broadcastcheck.Destroyed(context.Background(), t, localContext(t, "flint.task.maxFailures", "1"))
}
