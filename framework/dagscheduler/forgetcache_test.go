package dagscheduler

import (
	"testing"

	"github.com/flint-mesos/flint/framework/scheduler"
)

// ForgetCache drops the cached-partition locations of one run's nodes
// (by id prefix) and keeps the others'.
func TestForgetCacheDropsOneRunsLocations(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	loc := scheduler.Location{Host: "h1", ExecutorID: "e1"}
	s.CacheAdded("r1/map@a.go:1#0", 0, loc)
	s.CacheAdded("r1/map@a.go:1#0", 1, loc)
	s.CacheAdded("r10/map@a.go:1#0", 0, loc)
	if n := s.ForgetCache("r1/"); n != 2 {
		t.Fatalf("ForgetCache(r1/) dropped %d locations, want 2", n)
	}
	if _, ok := s.cache[cacheKey{"r10/map@a.go:1#0", 0}]; !ok || len(s.cache) != 1 {
		t.Fatalf("left %v, want only run r10's partition", s.cache)
	}
}
