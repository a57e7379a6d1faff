package sparkcases_test

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

type destroyOut struct {
	Line        int // of the first Destroy
	Before      []int
	Again       string
	AgainIsErr  bool
	ReadPanic   string
	TaskErr     string
	TaskIsError bool
}

var destroyJob = dataset.JobResult("sparkcases.broadcast.destroy", func(b *dataset.Builder, _ struct{}) (destroyOut, error) {
	var o destroyOut
	bc := dataset.NewBroadcast(b, []int{1, 2, 3, 4})
	nums := dataset.Parallelize(b, []int{0, 1, 2, 3}, 2)
	var err error
	if o.Before, err = dataset.Collect(dataset.Map(nums, func(i int) int { return bc.Value()[i] })); err != nil {
		return o, err
	}
	o.Line = callerLine() + 1
	if err := bc.Destroy(); err != nil {
		return o, err
	}
	again := bc.Destroy()
	o.Again, o.AgainIsErr = fmt.Sprint(again), errors.Is(again, dataset.ErrBroadcastDestroyed)
	func() {
		defer func() { o.ReadPanic = fmt.Sprint(recover()) }()
		bc.Value()
	}()
	_, err = dataset.Collect(dataset.Map(nums, func(i int) int { return bc.Value()[i] }))
	o.TaskErr, o.TaskIsError = fmt.Sprint(err), err != nil
	return o, nil
})

// BroadcastSuite "Using broadcast after destroy prints callsite" and
// destroying twice: after Destroy, reading the broadcast (on the driver
// or in a task) and destroying it again fail, naming where it was
// destroyed (Spark: "Attempted to use Broadcast(…) after it was destroyed
// (destroy at BroadcastSuite.scala:…)").
func TestBroadcastUseAfterDestroyNamesTheDestroySite(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		// the body's last action fails, so Run returns its error (with
		// the body's result)
		o, runErr := destroyJob.Run(t.Context(), fc, struct{}{})
		if fmt.Sprint(o.Before) != "[1 2 3 4]" {
			t.Errorf("values read before Destroy: %v, want [1 2 3 4]", o.Before)
		}
		site := fmt.Sprintf("destroyed at sparkcases/broadcast_test.go:%d", o.Line)
		if !o.AgainIsErr || !strings.Contains(o.Again, site) {
			t.Errorf("a second Destroy returned %q, want ErrBroadcastDestroyed naming %q", o.Again, site)
		}
		if !strings.Contains(o.ReadPanic, "used after Destroy") || !strings.Contains(o.ReadPanic, site) {
			t.Errorf("Value after Destroy panicked with %q, want it to name %q", o.ReadPanic, site)
		}
		if !o.TaskIsError || !strings.Contains(o.TaskErr, site) || runErr == nil || !strings.Contains(runErr.Error(), site) {
			t.Errorf("an action reading the broadcast after Destroy: %q (Run: %v), want a failure naming %q", o.TaskErr, runErr, site)
		}
	})
}

// callerLine is the line calling it.
func callerLine() int {
	_, _, line, _ := runtime.Caller(1)
	return line
}
