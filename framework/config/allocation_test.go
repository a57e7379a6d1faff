package config

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/allocation"
)

// Dynamic allocation's keys read with Spark's defaults; bad settings are one
// error at load naming the key, and only while the feature is enabled.
func TestDynamicAllocationSettings(t *testing.T) {
	c := mustLoad(t, LoadOptions{Conf: []string{"flint.dynamicAllocation.enabled=true"}})
	got, on, err := c.DynamicAllocation()
	if err != nil || !on {
		t.Fatalf("defaults: enabled %v, %v", on, err)
	}
	want := allocation.Config{MaxExecutors: math.MaxInt32, ExecutorIdleTimeout: 60 * time.Second,
		CachedExecutorIdleTimeout: allocation.Never, SchedulerBacklogTimeout: time.Second,
		SustainedSchedulerBacklogTimeout: time.Second, TasksPerExecutor: 1}
	if got != want {
		t.Errorf("defaults:\n got %+v\nwant %+v", got, want)
	}
	c = mustLoad(t, LoadOptions{Conf: []string{"flint.dynamicAllocation.enabled=true", "flint.dynamicAllocation.minExecutors=2",
		"flint.dynamicAllocation.maxExecutors=8", "flint.dynamicAllocation.executorIdleTimeout=30",
		"flint.dynamicAllocation.cachedExecutorIdleTimeout=5min", "flint.dynamicAllocation.schedulerBacklogTimeout=2s",
		"flint.executor.cores=4", "flint.task.cpus=2", "flint.shuffle.service.enabled=true"}})
	got, _, err = c.DynamicAllocation()
	if err != nil {
		t.Fatal(err)
	}
	want = allocation.Config{MinExecutors: 2, MaxExecutors: 8, InitialExecutors: 2, ExecutorIdleTimeout: 30 * time.Second,
		CachedExecutorIdleTimeout: 5 * time.Minute, SchedulerBacklogTimeout: 2 * time.Second,
		SustainedSchedulerBacklogTimeout: 2 * time.Second, TasksPerExecutor: 2, ShuffleService: true}
	if got != want {
		t.Errorf("set:\n got %+v\nwant %+v", got, want)
	}

	for _, tc := range []struct{ conf, key string }{
		{"flint.dynamicAllocation.minExecutors=5,flint.dynamicAllocation.maxExecutors=2", "flint.dynamicAllocation.minExecutors (5) is above flint.dynamicAllocation.maxExecutors (2)"},
		{"flint.dynamicAllocation.executorIdleTimeout=0", "flint.dynamicAllocation.executorIdleTimeout is 0s; it must be > 0"},
		{"flint.dynamicAllocation.cachedExecutorIdleTimeout=0", "flint.dynamicAllocation.cachedExecutorIdleTimeout is 0s"},
		{"flint.dynamicAllocation.initialExecutors=9,flint.dynamicAllocation.maxExecutors=3", "flint.dynamicAllocation.initialExecutors is 9"},
	} {
		conf := strings.Split(tc.conf, ",")
		_, err := Load(LoadOptions{Conf: append(conf, "flint.dynamicAllocation.enabled=true")})
		if err == nil || !errors.Is(err, ErrInvalidValue) || !errors.Is(err, allocation.ErrConfig) {
			t.Errorf("%s: error %v, want one wrapping ErrInvalidValue and allocation.ErrConfig", tc.conf, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tc.key) || strings.Count(msg, "\n") > 0 {
			t.Errorf("%s: error %q, want one line containing %q", tc.conf, msg, tc.key)
		}
		if _, err := Load(LoadOptions{Conf: conf}); err != nil {
			t.Errorf("%s with dynamic allocation disabled: %v", tc.conf, err)
		}
	}
}
