package scheduler

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// SchedulingMode orders task sets (root pool) or the task sets of a pool.
type SchedulingMode int

// Scheduling modes.
const (
	FIFO SchedulingMode = iota
	FAIR
)

func (m SchedulingMode) String() string {
	switch m {
	case FIFO:
		return "FIFO"
	case FAIR:
		return "FAIR"
	}
	return fmt.Sprintf("SchedulingMode(%d)", int(m))
}

// ParseSchedulingMode parses "FIFO" or "FAIR" (case-insensitive).
func ParseSchedulingMode(s string) (SchedulingMode, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "FIFO":
		return FIFO, nil
	case "FAIR":
		return FAIR, nil
	}
	return 0, fmt.Errorf("scheduler: unknown scheduling mode %q (want FIFO or FAIR)", s)
}

// PoolConfig configures one FAIR pool (Spark's fairscheduler.xml entry).
type PoolConfig struct {
	Name     string
	Mode     SchedulingMode // how the pool orders its task sets
	Weight   int            // share relative to sibling pools, >= 1
	MinShare int            // running tasks the pool gets before weights apply
}

// SpeculationConfig configures speculative execution of slow tasks.
type SpeculationConfig struct {
	Enabled        bool
	Interval       time.Duration // how often Tick checks
	MinTaskRuntime time.Duration // never speculate tasks running shorter
	Quantile       float64       // fraction of tasks finished before checking
	Multiplier     float64       // how many times the median is "slow"
}

// ExcludeConfig configures exclusion of executors and nodes after failures
// (Spark's spark.excludeOnFailure.*).
type ExcludeConfig struct {
	Enabled                      bool
	MaxTaskAttemptsPerExecutor   int // failures of one task on one executor before that task avoids it
	MaxTaskAttemptsPerNode       int // failures of one task on one node before that task avoids it
	MaxFailedTasksPerExecutor    int // failed tasks of one stage before the executor is excluded for it
	MaxFailedExecutorsPerNode    int // excluded executors of one stage before the node is excluded for it
	AppMaxFailedTasksPerExecutor int // failures in successful stages before app-wide exclusion
	AppMaxFailedExecutorsPerNode int // app-excluded executors on a node before the node is excluded
	Timeout                      time.Duration
	UnschedulableTimeout         time.Duration
}

// Config configures a TaskScheduler. Zero TaskCPUs and MaxTaskFailures take
// their defaults, as do locality levels missing from LocalityWait.
type Config struct {
	TaskCPUs        int
	MaxTaskFailures int
	LocalityWait    map[Level]time.Duration // ProcessLocal, NodeLocal, RackLocal
	Mode            SchedulingMode
	Pools           []PoolConfig
	MaxResultSize   int64 // total result bytes per task set; 0 = unlimited
	Speculation     SpeculationConfig
	Exclude         ExcludeConfig
}

// Defaults.
const (
	DefaultTaskCPUs        = 1
	DefaultMaxTaskFailures = 4
	DefaultLocalityWait    = 3 * time.Second
	DefaultPoolName        = "default"
)

// DefaultConfig returns Spark's defaults, with exclusion on failure enabled.
func DefaultConfig() Config {
	return Config{
		TaskCPUs:        DefaultTaskCPUs,
		MaxTaskFailures: DefaultMaxTaskFailures,
		LocalityWait: map[Level]time.Duration{
			ProcessLocal: DefaultLocalityWait, NodeLocal: DefaultLocalityWait, RackLocal: DefaultLocalityWait,
		},
		Mode: FIFO,
		Speculation: SpeculationConfig{
			Interval: 100 * time.Millisecond, MinTaskRuntime: 100 * time.Millisecond,
			Quantile: 0.75, Multiplier: 1.5,
		},
		Exclude: ExcludeConfig{
			Enabled:                    true,
			MaxTaskAttemptsPerExecutor: 1, MaxTaskAttemptsPerNode: 2,
			MaxFailedTasksPerExecutor: 2, MaxFailedExecutorsPerNode: 2,
			AppMaxFailedTasksPerExecutor: 2, AppMaxFailedExecutorsPerNode: 2,
			Timeout: time.Hour, UnschedulableTimeout: 120 * time.Second,
		},
	}
}

// ErrInvalidConfig wraps every configuration problem reported by New.
var ErrInvalidConfig = errors.New("scheduler: invalid config")

func (c *Config) applyDefaults() {
	if c.TaskCPUs == 0 {
		c.TaskCPUs = DefaultTaskCPUs
	}
	if c.MaxTaskFailures == 0 {
		c.MaxTaskFailures = DefaultMaxTaskFailures
	}
}

func (c *Config) validate() error {
	var errs []error
	bad := func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("scheduler: "+format+": %w", append(a, ErrInvalidConfig)...))
	}
	if c.TaskCPUs < 1 {
		bad("TaskCPUs must be >= 1, got %d", c.TaskCPUs)
	}
	if c.MaxTaskFailures < 1 || c.MaxTaskFailures > 65535 {
		bad("MaxTaskFailures must be in [1, 65535], got %d", c.MaxTaskFailures)
	}
	for l, d := range c.LocalityWait {
		if l != ProcessLocal && l != NodeLocal && l != RackLocal {
			bad("LocalityWait has no meaning for level %v", l)
		}
		if d < 0 {
			bad("LocalityWait[%v] must be >= 0, got %v", l, d)
		}
	}
	if c.Mode != FIFO && c.Mode != FAIR {
		bad("unknown Mode %v", c.Mode)
	}
	errs = append(errs, validatePools(c.Pools)...)
	if c.MaxResultSize < 0 {
		bad("MaxResultSize must be >= 0, got %d", c.MaxResultSize)
	}
	if s := c.Speculation; s.Enabled {
		if s.Interval <= 0 {
			bad("Speculation.Interval must be > 0, got %v", s.Interval)
		}
		if s.MinTaskRuntime < 0 {
			bad("Speculation.MinTaskRuntime must be >= 0, got %v", s.MinTaskRuntime)
		}
		if !(s.Quantile > 0 && s.Quantile <= 1) {
			bad("Speculation.Quantile must be in (0, 1], got %v", s.Quantile)
		}
		if !(s.Multiplier > 0) {
			bad("Speculation.Multiplier must be > 0, got %v", s.Multiplier)
		}
	}
	if e := c.Exclude; e.Enabled {
		for _, f := range []struct {
			name string
			v    int
		}{
			{"MaxTaskAttemptsPerExecutor", e.MaxTaskAttemptsPerExecutor},
			{"MaxTaskAttemptsPerNode", e.MaxTaskAttemptsPerNode},
			{"MaxFailedTasksPerExecutor", e.MaxFailedTasksPerExecutor},
			{"MaxFailedExecutorsPerNode", e.MaxFailedExecutorsPerNode},
			{"AppMaxFailedTasksPerExecutor", e.AppMaxFailedTasksPerExecutor},
			{"AppMaxFailedExecutorsPerNode", e.AppMaxFailedExecutorsPerNode},
		} {
			if f.v < 1 {
				bad("Exclude.%s must be >= 1, got %d", f.name, f.v)
			}
		}
		if e.Timeout <= 0 {
			bad("Exclude.Timeout must be > 0, got %v", e.Timeout)
		}
		if e.UnschedulableTimeout < 0 {
			bad("Exclude.UnschedulableTimeout must be >= 0, got %v", e.UnschedulableTimeout)
		}
	}
	return errors.Join(errs...)
}

func validatePools(pools []PoolConfig) []error {
	var errs []error
	seen := make(map[string]bool, len(pools))
	for i, p := range pools {
		name := p.Name
		if name == "" {
			errs = append(errs, fmt.Errorf("scheduler: pool #%d: empty name: %w", i, ErrInvalidConfig))
			name = fmt.Sprintf("#%d", i)
		}
		if seen[p.Name] && p.Name != "" {
			errs = append(errs, fmt.Errorf("scheduler: pool %q: defined twice: %w", name, ErrInvalidConfig))
		}
		seen[p.Name] = true
		if p.Mode != FIFO && p.Mode != FAIR {
			errs = append(errs, fmt.Errorf("scheduler: pool %q: unknown schedulingMode %v: %w", name, p.Mode, ErrInvalidConfig))
		}
		if p.Weight < 1 {
			errs = append(errs, fmt.Errorf("scheduler: pool %q: weight must be >= 1, got %d: %w", name, p.Weight, ErrInvalidConfig))
		}
		if p.MinShare < 0 {
			errs = append(errs, fmt.Errorf("scheduler: pool %q: minShare must be >= 0, got %d: %w", name, p.MinShare, ErrInvalidConfig))
		}
	}
	return errs
}

func (c *Config) localityWait(l Level) time.Duration {
	switch l {
	case ProcessLocal, NodeLocal, RackLocal:
		if d, ok := c.LocalityWait[l]; ok {
			return d
		}
		return DefaultLocalityWait
	}
	return 0
}
