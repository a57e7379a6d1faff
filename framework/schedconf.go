package framework

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// schedulerConfig maps flint.* keys onto the core's Config. Local masters
// turn exclusion off (one executor: excluding it would hang the job, as in
// Spark) and take maxFailures from local[N,F] (1 for plain local[N], like
// Spark). The embedded master turns it off too: all its agents run on this
// one host, so excluding "the node" after two failures would exclude every
// executor at once.
func schedulerConfig(cfg *Config, m backend.Master) (scheduler.Config, uint64, error) {
	sc := scheduler.DefaultConfig()
	sc.TaskCPUs = cfg.Int("flint.task.cpus")
	sc.MaxTaskFailures = cfg.Int("flint.task.maxFailures")
	sc.MaxResultSize = cfg.Size("flint.driver.maxResultSize")
	sc.LocalityWait = localityWaits(cfg)
	sc.Mode = scheduler.FIFO
	if strings.EqualFold(cfg.String("flint.scheduler.mode"), "FAIR") {
		sc.Mode = scheduler.FAIR
	}
	sc.Speculation = scheduler.SpeculationConfig{
		Enabled:        cfg.Bool("flint.speculation"),
		Interval:       cfg.Duration("flint.speculation.interval"),
		Quantile:       cfg.Float64("flint.speculation.quantile"),
		Multiplier:     cfg.Float64("flint.speculation.multiplier"),
		MinTaskRuntime: cfg.Duration("flint.speculation.minTaskRuntime"),
	}
	sc.Exclude = excludeConfig(cfg)
	if m.Kind == backend.MasterLocal {
		sc.Exclude.Enabled = false
		sc.MaxTaskFailures = max(m.MaxFailures, 1)
	}
	if m.Kind == backend.MasterEmbedded {
		sc.Exclude.Enabled = false
	}
	if path := cfg.String("flint.scheduler.allocation.file"); path != "" {
		pools, err := readPools(path)
		if err != nil {
			return sc, 0, err
		}
		sc.Pools = pools
	}
	return sc, seedOf(cfg), nil
}

// localityWaits reads the per-level waits; each inherits flint.locality.wait
// when unset (the config table says so).
func localityWaits(cfg *Config) map[scheduler.Level]time.Duration {
	return map[scheduler.Level]time.Duration{
		scheduler.ProcessLocal: cfg.Duration("flint.locality.wait.process"),
		scheduler.NodeLocal:    cfg.Duration("flint.locality.wait.node"),
		scheduler.RackLocal:    cfg.Duration("flint.locality.wait.rack"),
	}
}

func excludeConfig(cfg *Config) scheduler.ExcludeConfig {
	p := "flint.excludeOnFailure."
	return scheduler.ExcludeConfig{
		Enabled:                      cfg.Bool(p + "enabled"),
		MaxTaskAttemptsPerExecutor:   cfg.Int(p + "task.maxTaskAttemptsPerExecutor"),
		MaxTaskAttemptsPerNode:       cfg.Int(p + "task.maxTaskAttemptsPerNode"),
		MaxFailedTasksPerExecutor:    cfg.Int(p + "stage.maxFailedTasksPerExecutor"),
		MaxFailedExecutorsPerNode:    cfg.Int(p + "stage.maxFailedExecutorsPerNode"),
		AppMaxFailedTasksPerExecutor: cfg.Int(p + "application.maxFailedTasksPerExecutor"),
		AppMaxFailedExecutorsPerNode: cfg.Int(p + "application.maxFailedExecutorsPerNode"),
		Timeout:                      cfg.Duration(p + "timeout"),
		UnschedulableTimeout:         cfg.Duration("flint.scheduler.excludeOnFailure.unschedulableTaskSetTimeout"),
	}
}

func readPools(path string) ([]scheduler.PoolConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("framework: flint.scheduler.allocation.file: %w", err)
	}
	defer f.Close()
	format := "yaml"
	if strings.EqualFold(filepath.Ext(path), ".xml") {
		format = "xml"
	}
	pools, err := scheduler.ParsePools(f, format)
	if err != nil {
		return nil, fmt.Errorf("framework: flint.scheduler.allocation.file %s: %w", path, err)
	}
	return pools, nil
}

// seedOf returns flint.scheduler.seed, or a random seed when it is 0.
func seedOf(cfg *Config) uint64 {
	if s := cfg.Int("flint.scheduler.seed"); s != 0 {
		return uint64(s)
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("framework: crypto/rand failed: %v", err))
	}
	return binary.LittleEndian.Uint64(b[:]) & math.MaxInt64
}

func newRand(seed uint64) *mrand.Rand { return mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }
