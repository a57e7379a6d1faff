package embedded_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/deploy/embedded"
	"github.com/flint-mesos/flint/examples/pi"
	"github.com/flint-mesos/flint/examples/wordcount"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/internal/testkit/examplecheck"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// TestMain lets agents start this test binary as a coarse executor.
func TestMain(m *testing.M) {
	if os.Getenv(flint.EnvRole) != "" {
		os.Exit(executeProfiled())
	}
	goleak.VerifyTestMain(m)
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func newContext(t testing.TB, conf ...string) (*framework.Context, *syncBuf, error) {
	cfg, err := config.Load(config.LoadOptions{Conf: append([]string{
		"flint.master=embedded", "flint.ui.showConsoleProgress=false", "flint.executor.memory=64m",
		"flint.network.timeout=10s", "flint.executor.heartbeatInterval=500ms", "flint.embedded.workDir=" + t.TempDir(),
	}, conf...)})
	if err != nil {
		t.Fatal(err)
	}
	buf := &syncBuf{}
	log := logrus.New()
	log.SetOutput(buf)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if tt, ok := t.(*testing.T); ok {
		tt.Cleanup(func() {
			if tt.Failed() {
				tt.Logf("logs:\n%s", buf.String())
			}
		})
	}
	return fc, buf, err
}

// executorProcs counts live coarse-executor processes whose sandbox lies
// under dir.
func executorProcs(dir string) int { return roleProcs(dir, "coarse-executor") }

// roleProcs counts live processes started with FLINT_ROLE=role whose
// sandbox lies under dir.
func roleProcs(dir, role string) int { return len(rolePIDs(dir, role)) }

// rolePIDs lists them.
func rolePIDs(dir, role string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(env, []byte("FLINT_ROLE="+role+"\x00")) {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && strings.HasPrefix(cwd, dir) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestExamplesOnEmbeddedMaster(t *testing.T) {
	fc, logs, err := newContext(t)
	if err != nil {
		t.Fatal(err)
	}
	workDir := fc.Config().String("flint.embedded.workDir")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	est, err := pi.Estimate(ctx, fc, 10, 20000)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(est-math.Pi) > 0.05 {
		t.Fatalf("pi = %f", est)
	}
	in := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(in, []byte("a b a c a b\nc a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	counts, err := wordcount.Count(ctx, fc, wordcount.Options{Paths: []string{in}, Top: 3, Partitions: 2})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(counts.Top) != "[{a 4} {b 2} {c 2}]" {
		t.Fatalf("counts = %+v", counts)
	}
	// sort, join and PageRank on the executors, checked exactly
	examplecheck.All(ctx, t, fc)
	if n := executorProcs(workDir); n == 0 {
		t.Fatal("no executor process runs under the embedded agents' work directory")
	}
	// The coarse backend's input limit applies through the embedded master.
	huge := framework.Task{Function: pi.Sample.Name(), Codec: "gob", Input: make([]byte, gateway.DefaultMaxMessageSize)}
	if _, err := fc.RunJob(ctx, &framework.Job{Name: "huge", Tasks: []framework.Task{huge}}); !errors.Is(err, framework.ErrTaskTooLarge) {
		t.Fatalf("a %d-byte input: err = %v, want ErrTaskTooLarge", len(huge.Input), err)
	}
	if err := fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := executorProcs(workDir); n != 0 {
		t.Fatalf("%d executor processes left after Stop", n)
	}
	for _, want := range []string{`started the embedded Mesos master`, `registered with the Mesos master at \S+ as framework \S+`, `executor \d+ added on`} {
		if !regexp.MustCompile(want).MatchString(logs.String()) {
			t.Fatalf("logs lack %q", want)
		}
	}
}

// Fine-grained mode on the embedded master: every task is a Mesos task on
// Flint's Mesos executor (one per agent), which exits with the driver.
func TestFineGrainedOnEmbeddedMaster(t *testing.T) {
	fc, logs, err := newContext(t, "flint.mesos.coarse=false")
	if err != nil {
		t.Fatal(err)
	}
	workDir := fc.Config().String("flint.embedded.workDir")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	est, err := pi.Estimate(ctx, fc, 10, 20000)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(est-math.Pi) > 0.05 {
		t.Fatalf("pi = %f", est)
	}
	if !strings.Contains(logs.String(), "fine") {
		t.Fatalf("logs do not show the fine-grained backend:\n%s", logs.String())
	}
	if err := fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitfor.True(t, 10*time.Second, "the fine executors to exit after Stop", func() bool { return roleProcs(workDir, "fine-executor") == 0 })
}

func TestSizeFor(t *testing.T) {
	cfg := config.New()
	s, err := embedded.SizeFor(cfg, 8, 16384)
	if err != nil {
		t.Fatal(err)
	}
	if s.Agents != 2 || s.CPUs != 4 || s.MemMB != 8192 || s.ExecMemMB != 1408 {
		t.Fatalf("8 cpus, 16 GiB: %+v", s)
	}
	// A small machine still fits one default executor per agent.
	if s, _ = embedded.SizeFor(cfg, 1, 2048); s.CPUs != 1 || s.MemMB != 1408 {
		t.Fatalf("1 cpu, 2 GiB: %+v", s)
	}
	// Fine-grained mode adds the per-agent Mesos executor's own cores.
	fine := config.New()
	if err := fine.Set("flint.mesos.coarse", "false"); err != nil {
		t.Fatal(err)
	}
	if s, _ = embedded.SizeFor(fine, 2, 4096); s.CPUs != 1.1 {
		t.Fatalf("fine mode, 2 cpus: %+v, want 1.1 cpus per agent", s)
	}
	// 0 agents is refused when the configuration is set, naming the key.
	if err := cfg.Set("flint.embedded.agents", "0"); err == nil || !strings.Contains(err.Error(), "flint.embedded.agents") {
		t.Fatalf("setting 0 agents: err = %v, want a validation error naming flint.embedded.agents", err)
	}
}

// BenchmarkJobStart measures a cold start: NewContext on the embedded
// master (cluster start, subscription) and a one-task job, which ends as
// soon as its first task ran on an executor fetched and started for it.
func BenchmarkJobStart(b *testing.B) {
	for b.Loop() {
		fc, _, err := newContext(b)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := pi.Estimate(context.Background(), fc, 1, 1); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		_ = fc.Stop(context.Background())
		b.StartTimer()
	}
}
