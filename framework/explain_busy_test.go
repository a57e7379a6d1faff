package framework_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/flint-mesos/flint/framework"
)

var (
	busyStarted atomic.Int64
	busyHold    = framework.Register("test.busy-hold", func(ctx context.Context, x int) (int, error) {
		busyStarted.Add(1)
		<-ctx.Done()
		return 0, ctx.Err()
	})
)

// A task waiting only because every slot runs a task is explained as such,
// with the number of slots, and not with the offers' shortfalls, which
// read like a misconfiguration (issue 23, item 6).
func TestExplainSaysEverySlotIsBusy(t *testing.T) {
	busyStarted.Store(0)
	fc := newContext(t, "flint.master=local[2]")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { _, err := framework.Map(ctx, fc, busyHold, ints(5)); errc <- err }()
	waitFor(t, func() bool { return busyStarted.Load() == 2 })
	var pending []framework.Explanation
	for i := range 5 {
		e, err := fc.Explain(0, i)
		if err != nil {
			t.Fatal(err)
		}
		if e.SlotsBusy {
			pending = append(pending, e)
		}
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want cancellation", err)
	}
	if len(pending) != 3 {
		t.Fatalf("%d tasks explained as waiting for a busy slot, want the 3 not running", len(pending))
	}
	for _, e := range pending {
		if e.Slots != 2 || len(e.Offers) != 0 {
			t.Errorf("explanation %+v: want 2 slots and no offers", e)
		}
	}
}
