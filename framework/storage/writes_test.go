package storage_test

import (
	"testing"

	"github.com/flint-mesos/flint/framework/storage"
)

// A write's last sweep runs only while it is its directory's latest write: a later write
// into the same directory (whose own sweeps cover it) makes it skip, another directory's
// does not, and it runs once.
func TestLastSweepOnlyForTheLatestWriteOfItsDirectory(t *testing.T) {
	var w storage.Writes
	first := w.Begin("s3://b/out")
	other := w.Begin("s3://b/other")
	swept := 0
	sweep := func() { swept++ }
	if !w.LastSweep("s3://b/out", first, sweep) || swept != 1 {
		t.Fatalf("the latest write's last sweep: swept %d times, want 1", swept)
	}
	if w.LastSweep("s3://b/out", first, sweep) || swept != 1 {
		t.Fatalf("a second last sweep of the same write ran (swept %d times)", swept)
	}
	second := w.Begin("s3://b/out")
	third := w.Begin("s3://b/out")
	if w.LastSweep("s3://b/out", second, sweep) || swept != 1 {
		t.Fatalf("the last sweep of a write followed by another into its directory ran")
	}
	if !w.LastSweep("s3://b/out", third, sweep) || !w.LastSweep("s3://b/other", other, sweep) || swept != 3 {
		t.Fatalf("swept %d times, want 3: the latest writes of two directories", swept)
	}
}
