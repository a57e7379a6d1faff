package mesostest

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/examples/pi"
	"github.com/flint-mesos/flint/examples/wordcount"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
)

// FaithfulCluster is a cluster that allocates as Apache Mesos does by
// default: batches every second, freed resources offered only with the
// next batch (no allocate-on-release), and agents with room for Flint's
// default executors (flint.executor.memory 1g plus its 384 MiB overhead).
// Its agents fetch with minimesos' fetcher, which names files as Mesos'
// does.
func FaithfulCluster(t testing.TB, workDir string) *cluster.Cluster {
	t.Helper()
	return StartCluster(t, Cluster{Agents: 2, Resources: "cpus:2;mem:4096;disk:1024;ports:[31000-31100]", ShutdownGrace: time.Second,
		WorkDir: workDir, Master: func(mc *master.Config) {
			mc.AllocationInterval, mc.AllocateOnRelease = master.DefaultAllocationInterval, false
		}})
}

// ExamplesWithDefaults runs pi and wordcount against masterURL with
// Flint's default settings — only flint.master and mode (e.g.
// flint.mesos.coarse=false) set — checks their results, and calls after
// (if not nil) while the driver still runs.
func ExamplesWithDefaults(t testing.TB, masterURL string, after func(), mode ...string) {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Conf: append([]string{"flint.master=" + masterURL}, mode...)})
	if err != nil {
		t.Fatal(err)
	}
	log, _ := Logger(t)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := fc.Stop(context.Background()); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	est, err := pi.Estimate(ctx, fc, 8, 20000)
	if err != nil {
		t.Fatalf("pi: %v", err)
	}
	if math.Abs(est-math.Pi) > 0.05 {
		t.Fatalf("pi estimate %f too far from π", est)
	}
	// wordcount over datasets: executors read the file and shuffle.
	in := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(in, []byte(strings.Repeat("the quick brown fox jumps over the lazy dog the end\nthe fox\n", 50)), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := wordcount.Count(ctx, fc, wordcount.Options{Paths: []string{in}, Top: 3, Partitions: 3})
	if err != nil {
		t.Fatalf("wordcount: %v", err)
	}
	if want := "[{the 200} {fox 100} {brown 50}]"; fmt.Sprint(res.Top) != want || res.Words != 650 || res.Distinct != 9 {
		t.Fatalf("word counts %+v, want top %s of 650 words, 9 distinct", res, want)
	}
	if after != nil {
		after()
	}
}
