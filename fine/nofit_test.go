package fine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
)

// No offer can ever hold a task: after flint.mesos.fine.noFitTimeout the
// backend fails the job with ErrBackendAborted, naming what the offers
// lacked, instead of hanging; no executor was started.
func TestNoOfferFitsNamesTheResource(t *testing.T) {
	c := startCluster(t, clusterOpts{}) // 2 agents, cpus:4, mem:1024 each
	for _, tc := range []struct {
		name string
		conf []string
		want string
	}{
		{"cpus", []string{"flint.task.cpus=5"},
			"cpus 4.0 < 5.5 needed (flint.task.cpus + flint.mesos.mesosExecutor.cores)"},
		{"mem", []string{"flint.executor.memory=100g"},
			"mem 1024 MiB < 102432 MiB needed (flint.executor.memory + flint.mesos.executor.memoryOverhead)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustRun(t, mesosURL(c), append([]string{"flint.mesos.fine.noFitTimeout=1s"}, tc.conf...)...)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			_, err := framework.Map(ctx, r.fc, double, ints(2))
			took := time.Since(start)
			if !errors.Is(err, framework.ErrBackendAborted) || ctx.Err() != nil {
				t.Fatalf("job error = %v, want the backend to abort it (not the test's deadline)", err)
			}
			msg := err.Error()
			for _, want := range []string{"flint.mesos.fine.noFitTimeout", "no offer fits a task", tc.want, c.Agents[0].ID(), c.Agents[1].ID()} {
				if !strings.Contains(msg, want) {
					t.Fatalf("job error lacks %q: %v", want, msg)
				}
			}
			if took < time.Second {
				t.Fatalf("aborted after %s, before flint.mesos.fine.noFitTimeout=1s", took)
			}
			if n := len(executors(r.mark)); n != 0 {
				t.Fatalf("%d executor processes started although nothing fits", n)
			}
		})
	}
}
