package fine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
)

// Inputs close to the fine-grained limit, several launched at once, all
// reach the executors; one above it fails the job before any task runs,
// naming the limit.
func TestLargeTaskInputs(t *testing.T) {
	// One agent with room for all eight tasks in one offer: 8 × 3 MiB in
	// one ACCEPT call would pass minimesos' 16 MiB request limit.
	c := startCluster(t, clusterOpts{agents: 1, resources: "cpus:9;mem:2048;disk:1024"})
	r := mustRun(t, mesosURL(c))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := mesostest.LargeInputs(ctx, r.fc, 8, 3<<20); err != nil {
		t.Fatal(err)
	}
	_, err := framework.Map(ctx, r.fc, mesostest.Size, [][]byte{{1}, make([]byte, 5<<20)})
	if !errors.Is(err, framework.ErrTaskTooLarge) || !errors.Is(err, framework.ErrInvalidJob) ||
		!strings.Contains(err.Error(), "task 1:") || !strings.Contains(err.Error(), "4 MiB record limit") {
		t.Fatalf("err = %v, want ErrTaskTooLarge for task 1 naming the limit", err)
	}
}
