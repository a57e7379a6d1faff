package coarse_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
)

// Large inputs launched together reach the executor (in several launch
// messages); an input above the gateway's message limit fails the job
// before any task runs, naming the limit, and no executor is lost.
func TestLargeTaskInputs(t *testing.T) {
	c := startCluster(t, clusterOpts{agents: 1, resources: "cpus:8;mem:1024;disk:1024"})
	r := mustRun(t, mesosURL(c))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := mesostest.LargeInputs(ctx, r.fc, 8, 3<<20); err != nil {
		t.Fatal(err)
	}
	before := r.executors()

	huge := framework.Task{Function: double.Name(), Codec: "gob", Input: make([]byte, gateway.DefaultMaxMessageSize)}
	_, err := r.fc.RunJob(ctx, &framework.Job{Name: "huge", Tasks: []framework.Task{{Function: double.Name(), Codec: "gob", Input: []byte{3, 4, 0, 2}}, huge}})
	if !errors.Is(err, framework.ErrTaskTooLarge) || !strings.Contains(err.Error(), "task 1:") || !strings.Contains(err.Error(), "gRPC message limit") {
		t.Fatalf("err = %v, want ErrTaskTooLarge for task 1 naming the limit", err)
	}
	if after := r.executors(); len(after) != len(before) || after[0].pid != before[0].pid {
		t.Fatalf("executors changed: %v → %v", before, after)
	}
}
