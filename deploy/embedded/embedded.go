package embedded

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/internal/plural"
)

func init() { backend.Register(backend.Embedded, New) }

// fetchCacheBytes bounds each embedded agent's fetch cache: the driver's
// binary is fetched once per agent, not once per executor.
const fetchCacheBytes = 4 << 30

// Backend runs an in-process minimesos master with agents and a Mesos
// backend (coarse-grained) connected to it.
type Backend struct {
	p       backend.Params
	log     logrus.FieldLogger
	size    Size
	workDir string
	tempDir bool

	cluster    *cluster.Cluster
	clusterLog *logrus.Logger // the cluster's own (quieter) logger
	inner      backend.Backend
	once       sync.Once
	err        error
}

var _ backend.Backend = (*Backend)(nil)

// Size is the embedded cluster's shape.
type Size struct {
	Agents      int
	CPUs        float64 // per agent
	MemMB       int64   // per agent
	AllocEvery  time.Duration
	ExecMemMB   float64 // one executor's memory plus overhead
	MachineCPUs int
	MachineMB   int64
}

// New builds the embedded backend; it is the factory registered as
// backend.Embedded.
func New(p backend.Params) (backend.Backend, error) {
	if p.Master.Kind != backend.MasterEmbedded {
		return nil, fmt.Errorf("embedded: master %q is not embedded", p.Master.Raw)
	}
	size, err := SizeFor(p.Config, runtime.NumCPU(), machineMemMB())
	if err != nil {
		return nil, err
	}
	log := p.Logger
	if log == nil {
		log = logrus.StandardLogger()
	}
	return &Backend{p: p, log: log, size: size, workDir: p.Config.String("flint.embedded.workDir")}, nil
}

// SizeFor derives the cluster's shape from the flint.embedded.* keys and the
// machine: CPUs split evenly across agents (at least 1 each), memory split
// evenly but at least one executor's memory plus overhead per agent (the
// agents do not enforce memory; they only advertise it).
func SizeFor(cfg *config.Config, cpus int, memMB int64) (Size, error) {
	s := Size{Agents: cfg.Int("flint.embedded.agents"), AllocEvery: cfg.Duration("flint.embedded.allocationInterval"),
		MachineCPUs: cpus, MachineMB: memMB}
	if s.Agents < 1 {
		return s, fmt.Errorf("embedded: flint.embedded.agents=%d must be at least 1", s.Agents)
	}
	if s.AllocEvery <= 0 {
		return s, fmt.Errorf("embedded: flint.embedded.allocationInterval must be positive")
	}
	s.CPUs = cfg.Float64("flint.embedded.agent.cpus")
	if s.CPUs == 0 {
		s.CPUs = math.Max(1, math.Floor(float64(cpus)/float64(s.Agents)))
	}
	if s.CPUs < 0 {
		return s, fmt.Errorf("embedded: flint.embedded.agent.cpus=%g must be positive", s.CPUs)
	}
	if !cfg.Bool("flint.mesos.coarse") && !cfg.IsSet("flint.embedded.agent.cpus") {
		// Fine-grained mode: room for the per-agent Mesos executor's own
		// cores on top of whole task slots (the machine's cores, not more tasks).
		s.CPUs += cfg.Float64("flint.mesos.mesosExecutor.cores")
	}
	mem := float64(cfg.Size("flint.executor.memory")) / (1 << 20)
	overhead := math.Max(384, 0.10*mem)
	if cfg.IsSet("flint.mesos.executor.memoryOverhead") {
		overhead = float64(cfg.Size("flint.mesos.executor.memoryOverhead")) / (1 << 20)
	}
	s.ExecMemMB = math.Ceil(mem + overhead)
	if cfg.IsSet("flint.embedded.agent.memory") {
		s.MemMB = cfg.Size("flint.embedded.agent.memory") >> 20
	} else {
		s.MemMB = max(memMB/int64(s.Agents), int64(s.ExecMemMB))
		if n := cfg.Int("flint.executor.cores"); n > 0 {
			// room for every executor the agent's CPUs allow
			s.MemMB = max(s.MemMB, int64(s.ExecMemMB)*int64(math.Floor(s.CPUs/float64(n))))
		}
	}
	return s, nil
}

// machineMemMB reads MemTotal from /proc/meminfo (4 GiB when unknown).
func machineMemMB() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 4096
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb >> 10
			}
		}
	}
	return 4096
}

// Start implements backend.Backend: it starts the master and agents on
// loopback, then the Mesos backend registered with it.
func (b *Backend) Start(ctx context.Context, d backend.Driver) error {
	if b.workDir == "" {
		if removed, err := GC(os.TempDir(), false); err != nil {
			b.log.Warn(err)
		} else if len(removed) > 0 {
			b.log.Debugf("embedded: removed %d work directories of drivers that died: %s", len(removed), strings.Join(removed, ", "))
		}
		dir, err := claimWorkDir(os.TempDir())
		if err != nil {
			return fmt.Errorf("embedded: work directory: %w", err)
		}
		b.workDir, b.tempDir = dir, true
	}
	clog := quieter(b.log)
	if e, ok := clog.(*logrus.Entry); ok {
		b.clusterLog = e.Logger
	}
	res := fmt.Sprintf("cpus:%g;mem:%d;disk:10240;ports:[31000-32000]", b.size.CPUs, b.size.MemMB)
	c, err := cluster.Start(ctx, cluster.Config{
		Listen: "127.0.0.1:0",
		Master: master.Config{AllocationInterval: b.size.AllocEvery, AllocateOnRelease: true, Logger: clog},
		Agents: b.size.Agents,
		Agent: agent.Config{WorkDir: b.workDir, Resources: res, Logger: clog,
			ShutdownGrace: 2 * time.Second, KillGrace: 2 * time.Second},
		FetchCacheBytes: fetchCacheBytes,
		Logger:          clog,
	})
	if err != nil {
		b.removeWorkDir()
		return fmt.Errorf("embedded: start the embedded master: %w", err)
	}
	b.cluster = c
	addr := strings.TrimPrefix(c.URL(), "http://")
	b.log.WithField("master", c.URL()).Infof("embedded: started the embedded Mesos master at %s with %s (%s, %d MiB each; sandboxes in %s)",
		c.URL(), plural.N(b.size.Agents, "agent"), plural.F(b.size.CPUs, "cpu"), b.size.MemMB, b.workDir)
	inner, err := backend.New(backend.Params{
		Master: backend.Master{Raw: "mesos://" + addr, Kind: backend.MasterMesos, Address: addr},
		Config: b.p.Config, Logger: b.log, Registry: b.p.Registry, Metrics: b.p.Metrics,
	})
	if err == nil {
		err = inner.Start(ctx, d)
	}
	if err != nil {
		_ = c.Close(context.Background())
		b.removeWorkDir()
		return fmt.Errorf("embedded: %w", err)
	}
	b.inner = inner
	if f, ok := inner.(interface{ FrameworkID() string }); ok {
		b.log.Debugf("embedded: framework %s registered with the embedded master", f.FrameworkID())
	}
	return nil
}

// quieter logs the cluster's own messages at warning level and above, to
// the driver's log output.
func quieter(l logrus.FieldLogger) logrus.FieldLogger {
	var base *logrus.Logger
	switch v := l.(type) {
	case *logrus.Logger:
		base = v
	case *logrus.Entry:
		base = v.Logger
	}
	q := logrus.New()
	q.SetLevel(logrus.WarnLevel)
	if base == nil {
		q.SetOutput(io.Discard)
		return q
	}
	q.SetOutput(base.Out)
	q.SetFormatter(base.Formatter)
	if base.GetLevel() < logrus.WarnLevel {
		q.SetLevel(base.GetLevel())
	}
	return q.WithField("component", "embedded-mesos")
}

// Cluster is the embedded master and agents (nil before Start).
func (b *Backend) Cluster() *cluster.Cluster { return b.cluster }

// Mesos is the Mesos backend connected to the embedded master.
func (b *Backend) Mesos() backend.Backend { return b.inner }

var _ backend.Unwrapper = (*Backend)(nil)

// Unwrap implements backend.Unwrapper: the driver finds the Mesos
// backend's optional interfaces (file server, sandboxes, task size limit,
// placement reasons) through it (nil before Start).
func (b *Backend) Unwrap() backend.Backend { return b.inner }

// Apply implements backend.Backend: the Mesos backend applies the batch.
func (b *Backend) Apply(batch backend.Batch) {
	if b.inner != nil {
		b.inner.Apply(batch)
	}
}

// FetchResult implements backend.Backend.
func (b *Backend) FetchResult(ctx context.Context, executorID, blockID string) ([]byte, error) {
	return b.inner.FetchResult(ctx, executorID, blockID)
}

// DefaultParallelism implements backend.Backend.
func (b *Backend) DefaultParallelism() int {
	if b.inner == nil {
		return max(2, int(b.size.CPUs)*b.size.Agents)
	}
	return b.inner.DefaultParallelism()
}

// failed reports whether an executor or task of the embedded master
// failed (a Mesos task ended TASK_FAILED), so its sandbox is worth keeping.
func (b *Backend) failed() bool {
	return b.cluster != nil && b.cluster.Master.Metrics()["master/tasks_failed"] > 0
}

// Stop implements backend.Backend: it stops the Mesos backend (executors
// end, the framework is torn down), then the master and agents, and
// removes a temporary work directory — unless an executor or task failed:
// then the sandboxes stay for debugging and Stop says where.
func (b *Backend) Stop(ctx context.Context) error {
	b.once.Do(func() {
		var errs []error
		if b.inner != nil {
			errs = append(errs, b.inner.Stop(ctx))
		}
		if b.cluster != nil {
			// Closing master and agents races their last messages (a
			// delivery to a closed agent): expected, not worth a warning.
			if b.clusterLog != nil && b.clusterLog.GetLevel() < logrus.DebugLevel {
				b.clusterLog.SetLevel(logrus.ErrorLevel)
			}
			errs = append(errs, b.cluster.Close(ctx))
			b.log.Debug("embedded: stopped the embedded Mesos master")
		}
		b.removeWorkDir()
		b.err = errors.Join(errs...)
	})
	return b.err
}

func (b *Backend) removeWorkDir() {
	if b.failed() {
		if b.tempDir {
			_ = os.WriteFile(filepath.Join(b.workDir, KeptFile), nil, 0o644)
		}
		b.log.Warnf("embedded: kept the sandboxes of the failed executors and tasks in %s (each executor's stderr and stdout are in agent-*/slaves/*/frameworks/*/executors/ID/runs/latest; `flint mesos gc` removes them)", b.workDir)
		return
	}
	if b.tempDir {
		if err := os.RemoveAll(b.workDir); err != nil {
			b.log.Warnf("embedded: remove %s: %v", b.workDir, err)
		}
	}
}
