package dagscheduler

import (
	"slices"
	"strings"

	"github.com/flint-mesos/flint/framework/scheduler"
)

type prefMemo struct {
	locs []scheduler.Location
	busy bool // being computed (a diamond reaching itself)
}

// preferredLocs is Spark's getPreferredLocs: a cached partition prefers
// the executors holding it; an input split its hosts; a reduce partition
// the hosts holding most of its input; otherwise the first narrow parent
// partition with a preference. Results are memoised per stage submission.
func (s *Scheduler) preferredLocs(n *nodeInfo, p int, memo map[cacheKey]prefMemo) []scheduler.Location {
	key := cacheKey{n.ID, p}
	if m, ok := memo[key]; ok {
		return m.locs
	}
	memo[key] = prefMemo{busy: true}
	locs := s.computePrefs(n, p, memo)
	memo[key] = prefMemo{locs: locs}
	return locs
}

func (s *Scheduler) computePrefs(n *nodeInfo, p int, memo map[cacheKey]prefMemo) []scheduler.Location {
	if n.Cached {
		if locs := s.cache[cacheKey{n.ID, p}]; len(locs) > 0 {
			return slices.Clone(locs)
		}
	}
	if n.Preferred != nil && len(n.Preferred[p]) > 0 {
		return n.Preferred[p]
	}
	if !s.cfg.DisableReduceLocality && n.Partitions < localityMaxReduces {
		for j, d := range n.Deps {
			if d.Kind != Shuffle || n.parents[j].Partitions >= localityMaxMaps {
				continue
			}
			if hosts := s.tracker.PreferredHosts(d.ShuffleID, p, s.cfg.ReduceLocalityFraction); len(hosts) > 0 {
				locs := make([]scheduler.Location, len(hosts))
				for i, h := range hosts {
					locs[i] = scheduler.Location{Host: h}
				}
				return locs
			}
		}
	}
	for j := range n.Deps {
		d := &n.Deps[j]
		if d.Kind == Shuffle {
			continue
		}
		for _, pp := range parentPartitions(d, n.parents[j], p) {
			if locs := s.preferredLocs(n.parents[j], pp, memo); len(locs) > 0 {
				return locs
			}
		}
	}
	return nil
}

// CacheAdded records that executor loc holds partition part of a cached
// node: later tasks computing it prefer that executor, and a fully cached
// node is not recomputed.
func (s *Scheduler) CacheAdded(node NodeID, part int, loc scheduler.Location) {
	k := cacheKey{node, part}
	if !slices.Contains(s.cache[k], loc) {
		s.cache[k] = append(s.cache[k], loc)
	}
}

// CacheRemoved records that an executor dropped a cached partition.
func (s *Scheduler) CacheRemoved(node NodeID, part int, executorID string) {
	k := cacheKey{node, part}
	s.cache[k] = slices.DeleteFunc(s.cache[k], func(l scheduler.Location) bool { return l.ExecutorID == executorID })
	if len(s.cache[k]) == 0 {
		delete(s.cache, k)
	}
}

// ForgetCache drops every cached-partition location of nodes whose id
// starts with prefix (a dataset run that ended: its executors no longer
// serve those partitions to anyone) and reports how many it dropped.
func (s *Scheduler) ForgetCache(prefix NodeID) int {
	n := 0
	for k := range s.cache {
		if strings.HasPrefix(string(k.node), string(prefix)) {
			delete(s.cache, k)
			n++
		}
	}
	return n
}

// CachedExecutors names the executors holding a cached partition (dynamic
// allocation gives them cachedExecutorIdleTimeout).
func (s *Scheduler) CachedExecutors() map[string]bool {
	out := map[string]bool{}
	for _, locs := range s.cache {
		for _, l := range locs {
			out[l.ExecutorID] = true
		}
	}
	return out
}

func (s *Scheduler) dropCacheOn(exec string) {
	for k, locs := range s.cache {
		locs = slices.DeleteFunc(locs, func(l scheduler.Location) bool { return l.ExecutorID == exec })
		if len(locs) == 0 {
			delete(s.cache, k)
		} else {
			s.cache[k] = locs
		}
	}
}
