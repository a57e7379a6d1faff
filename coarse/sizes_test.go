package coarse_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/framework"
)

// size returns the length of its input and its first byte.
var size = framework.Register("coarse_test.size", func(_ context.Context, b []byte) ([2]int, error) {
	if len(b) == 0 {
		return [2]int{}, nil
	}
	return [2]int{len(b), int(b[0])}, nil
})

// Large inputs launched together reach the executor (in several launch
// messages); an input above the gateway's message limit fails the job
// before any task runs, naming the limit, and no executor is lost.
func TestLargeTaskInputs(t *testing.T) {
	c := startCluster(t, clusterOpts{agents: 1, resources: "cpus:8;mem:1024;disk:1024"})
	r := mustRun(t, mesosURL(c))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const each = 3 << 20
	var in [][]byte
	for i := range 8 {
		in = append(in, bytes.Repeat([]byte{byte(i + 1)}, each))
	}
	out, err := framework.Map(ctx, r.fc, size, in)
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range out {
		if o != [2]int{each, i + 1} {
			t.Fatalf("task %d saw %v, want [%d %d]", i, o, each, i+1)
		}
	}
	before := r.executors()

	huge := framework.Task{Function: double.Name(), Codec: "gob", Input: make([]byte, gateway.DefaultMaxMessageSize)}
	_, err = r.fc.RunJob(ctx, &framework.Job{Name: "huge", Tasks: []framework.Task{{Function: double.Name(), Codec: "gob", Input: []byte{3, 4, 0, 2}}, huge}})
	if !errors.Is(err, framework.ErrTaskTooLarge) || !strings.Contains(err.Error(), "task 1:") || !strings.Contains(err.Error(), "gRPC message limit") {
		t.Fatalf("err = %v, want ErrTaskTooLarge for task 1 naming the limit", err)
	}
	if after := r.executors(); len(after) != len(before) || after[0].pid != before[0].pid {
		t.Fatalf("executors changed: %v → %v", before, after)
	}
}
