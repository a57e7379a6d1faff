package dataset

import (
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/dataset/internal/detach"
	"github.com/flint-mesos/flint/framework/recordcodec"
)

// StorageLevel is how Persist keeps a dataset's partitions on the
// executors that compute them.
//
// Levels Spark has and Flint does not offer:
//
//   - MEMORY_ONLY_SER and MEMORY_AND_DISK_SER: in Spark they keep partitions
//     as serialized bytes on the JVM heap, trading CPU for a smaller heap
//     and fewer objects for the garbage collector. MemoryOnly keeps Go
//     values (a []T): for flat records (numbers, small structs of them)
//     that is about as compact as their encoding and a serialized form
//     would only add a decode per use; for pointer-rich records (strings,
//     slices, maps) a serialized level would mean something in Go too —
//     one buffer per partition instead of many objects for the garbage
//     collector to scan. It is not offered yet: DiskOnly keeps a dataset's
//     encoded form off the heap (and the operating system's page cache
//     keeps recently written files in memory).
//   - The replicated levels (MEMORY_ONLY_2, DISK_ONLY_2, …): a second copy
//     on another executor guards against losing one executor, but on
//     Mesos an executor is lost with its agent (and its local disk), and
//     a lost partition is recomputed from its lineage, which the DAG core
//     already does for every cached level; the copy would double the
//     memory, disk and network a persisted dataset costs for a recovery
//     lineage gives anyway.
type StorageLevel int

const (
	// MemoryOnly keeps partitions in memory, within the executor's storage
	// budget (flint.storage.memory); a partition that does not fit is not
	// kept and is recomputed from its lineage when needed again (Spark's
	// MEMORY_ONLY).
	MemoryOnly StorageLevel = iota + 1
	// MemoryAndDisk keeps partitions in memory while they fit the budget
	// and writes the others, encoded with the dataset's record codec, to
	// the executor's local directory (flint.local.dir), reading them back
	// when needed (Spark's MEMORY_AND_DISK).
	MemoryAndDisk
	// DiskOnly writes every partition, encoded with the dataset's record
	// codec, to the executor's local directory as it is computed (the
	// records are handed on, not kept in memory) and reads it back when
	// needed again (Spark's DISK_ONLY). It takes none of the storage
	// budget.
	DiskOnly
)

func (l StorageLevel) String() string {
	switch l {
	case MemoryOnly:
		return "MemoryOnly"
	case MemoryAndDisk:
		return "MemoryAndDisk"
	case DiskOnly:
		return "DiskOnly"
	}
	return fmt.Sprintf("StorageLevel(%d)", int(l))
}

// Persist keeps the dataset's partitions on the executors that compute
// them, at level: the driver's DAG core learns where each partition is,
// so a later action's task prefers that executor (delay scheduling,
// flint.locality.wait) and reads it instead of recomputing its lineage; a
// partition whose executor is gone (or a task placed elsewhere, or a
// partition that was not kept) is recomputed from lineage.
//
// A partition kept in memory holds its own bytes: the strings its records
// hold by value (the record, its struct fields, array and slice elements,
// nested) are copied as they are kept, so a few lines of a TextFile do not
// keep the 256 KiB chunks they were read into, and the budget's estimate
// is the memory they take. Strings behind pointers, maps and interfaces
// are not followed (they may be shared; package detach says why). Records
// without strings cost nothing more; records handed on or written to disk
// are not copied.
func Persist[T any](ds Dataset[T], level StorageLevel) Dataset[T] {
	if level != MemoryOnly && level != MemoryAndDisk && level != DiskOnly {
		panic(fmt.Sprintf("dataset: Persist(%s) of %s: not a storage level", level, ds.n.id))
	}
	ds.n.storage = level
	return ds
}

// Cache is Persist(ds, MemoryOnly).
func Cache[T any](ds Dataset[T]) Dataset[T] { return Persist(ds, MemoryOnly) }

// Unpersist stops caching the dataset: the driver's process (local mode's
// executor) drops its partitions, memory and files, at once; another
// executor drops them when it runs the run's next task, or when the run
// ends or its storage budget needs the room.
func Unpersist[T any](ds Dataset[T]) Dataset[T] {
	if ds.n.storage != 0 {
		ds.n.unpersisted = true
	}
	ds.n.storage = 0
	if b := ds.n.b; b.Driver() && b.run != nil {
		b.st.cache.dropNode(b.run.runID, ds.n.id)
	}
	return ds
}

// dropUnpersisted drops, from c, run's partitions of nodes nodes that
// the body unpersisted.
func (c *cacheStore) dropUnpersisted(run string, nodes []node) {
	for _, n := range nodes {
		if in := n.info(); in.unpersisted {
			c.dropNode(run, in.id)
		}
	}
}

// cacheStore holds partitions of persisted datasets one application
// computed in this process (its environment's: state), by run, node and
// partition, and the memory they take of the storage budget (the latest
// task's settings.StorageMemory). Partitions of the maxCacheRuns most
// recent runs are kept: an executor does not learn when a run ends, so
// older runs' partitions (and files) are dropped as new runs arrive, and
// their memory is the first evicted when the budget is short. Another
// application's runs (another Context in this process) are not counted,
// evicted or dropped.
type cacheStore struct {
	sync.Mutex
	m      map[cacheKey]*cacheEntry
	runs   []string // runs with entries, oldest first
	used   int64
	budget int64
	seq    uint64
}

const maxCacheRuns = 8

type cacheKey struct {
	run  string
	node dagscheduler.NodeID
	part int
}

// cacheEntry is one partition: in memory (recs) or in a file (path), or
// not kept (it stays in the map only while it is computed).
type cacheEntry struct {
	once  sync.Once
	seq   uint64 // creation order: older entries are evicted first
	recs  any    // []T
	path  string // the encoded records, on disk
	bytes int64  // estimated memory of recs, reserved from the budget (under its cacheStore's lock)
	kept  bool
	err   error
}

// runCached emits partition p of n from the application's cache on this
// executor, computing and keeping it first if it is not there. Concurrent
// tasks needing the same partition compute it once.
func runCached[T any](tc *taskContext, n *tnode[T], p int, emit func([]T) error) error {
	cached := &tc.env.state.cache
	k := cacheKey{run: tc.env.runID, node: n.id, part: p}
	e := cached.entryFor(k, tc.storage)
	e.once.Do(func() { e.err = fill(tc, n, k, e) })
	if e.err != nil || !e.kept {
		cached.Lock()
		if cached.m[k] == e {
			delete(cached.m, k) // a failed or unkept computation is not remembered
		}
		cached.Unlock()
	}
	if e.err != nil {
		return e.err
	}
	if e.kept {
		tc.holdsCached(n.id, p)
	}
	if e.path != "" {
		return readSpilled(tc, e.path, emit)
	}
	recs, _ := e.recs.([]T)
	for i := 0; i < len(recs); i += batchSize {
		if err := emit(recs[i:min(len(recs), i+batchSize):min(len(recs), i+batchSize)]); err != nil {
			return err
		}
	}
	return nil
}

// entryFor is k's entry, made if there is none; budget is the task's
// storage memory.
func (cached *cacheStore) entryFor(k cacheKey, budget int64) *cacheEntry {
	cached.Lock()
	defer cached.Unlock()
	if budget > 0 {
		cached.budget = budget
	}
	if !slices.Contains(cached.runs, k.run) {
		cached.runs = append(cached.runs, k.run)
		if len(cached.runs) > maxCacheRuns {
			cached.dropRunLocked(cached.runs[0])
		}
	}
	e := cached.m[k]
	if e == nil {
		cached.seq++
		e = &cacheEntry{seq: cached.seq}
		cached.m[k] = e
	}
	return e
}

// fill computes partition k of n into e: in memory while it fits the
// storage budget; past that on disk (MemoryAndDisk) or not kept
// (MemoryOnly: the records are handed on and forgotten); DiskOnly all on
// disk.
//
// Records kept in memory are detached first (package detach): their
// strings are copied, so a partition holds its own bytes, which the
// budget's estimate counts, instead of the buffers its strings were cut
// from (a TextFile line's 256 KiB chunk). Records handed on or written to
// disk are not copied; once a partition goes over the budget, the records
// detached before are the only cost wasted, and they fit the budget.
func fill[T any](tc *taskContext, n *tnode[T], k cacheKey, e *cacheEntry) (err error) {
	if n.storage == DiskOnly {
		return fillDisk(tc, n, k, e)
	}
	cached := &tc.env.state.cache
	var recs []T
	var size int64
	var sp *spillWriter[T]
	codec := recordcodec.For[T]()
	detachKept := detach.For[T]() // nil: T holds no string
	over := false
	defer func() {
		if sp != nil {
			if cerr := sp.close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(sp.path)
			}
		}
		if err != nil || over {
			cached.release(size)
			return
		}
		e.recs, e.kept = recs, true
		cached.Lock()
		e.bytes = size
		cached.Unlock()
	}()
	err = n.compute(tc, k.part, func(b []T) error {
		if sp != nil {
			return sp.write(b)
		}
		if !over {
			need := estimateSize(codec, b)
			if over = !cached.reserve(k.run, need); !over {
				size += need
			}
		}
		if !over || n.storage != MemoryAndDisk {
			recs = append(recs, b...)
			if !over && detachKept != nil {
				detachKept(recs[len(recs)-len(b):])
			}
			return nil
		}
		cached.release(size)
		size = 0
		var err error
		if sp, err = newSpillWriter[T](tc, k); err != nil {
			return err
		}
		if err := sp.write(recs); err != nil {
			return err
		}
		recs = nil
		return sp.write(b)
	})
	if err == nil && sp != nil {
		if err = sp.close(); err == nil {
			cached.Lock()
			e.path, e.kept = sp.path, true
			cached.Unlock()
		}
		sp = nil
		return err
	}
	if over {
		e.recs = recs // MemoryOnly: not kept, handed on
	}
	return err
}

// fillDisk computes partition k of n straight into a file.
func fillDisk[T any](tc *taskContext, n *tnode[T], k cacheKey, e *cacheEntry) error {
	sp, err := newSpillWriter[T](tc, k)
	if err != nil {
		return err
	}
	err = n.compute(tc, k.part, sp.write)
	if cerr := sp.close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(sp.path)
		return err
	}
	cached := &tc.env.state.cache
	cached.Lock()
	e.path, e.kept = sp.path, true
	cached.Unlock()
	return nil
}

// reserve takes n bytes of the storage budget for run, evicting other
// runs' in-memory partitions (oldest first) to make room.
func (cached *cacheStore) reserve(run string, n int64) bool {
	cached.Lock()
	defer cached.Unlock()
	for cached.used+n > cached.budget {
		var victim *cacheEntry
		var vk cacheKey
		for k, e := range cached.m {
			if k.run != run && e.bytes > 0 && (victim == nil || e.seq < victim.seq) {
				victim, vk = e, k
			}
		}
		if victim == nil {
			return false
		}
		delete(cached.m, vk)
		cached.used -= victim.bytes
		victim.bytes = 0
	}
	cached.used += n
	return true
}

func (cached *cacheStore) release(n int64) {
	cached.Lock()
	defer cached.Unlock()
	cached.used -= n
}

// dropRun forgets run's cached partitions, in memory and on disk.
func (cached *cacheStore) dropRun(run string) {
	cached.Lock()
	defer cached.Unlock()
	cached.dropRunLocked(run)
}

// dropNode forgets run's cached partitions of node, in memory and on
// disk.
func (cached *cacheStore) dropNode(run string, node dagscheduler.NodeID) {
	cached.Lock()
	defer cached.Unlock()
	for k, e := range cached.m {
		if k.run == run && k.node == node {
			cached.dropEntryLocked(k, e)
		}
	}
}

// dropAll forgets every cached partition, in memory and on disk (the
// application ended in this process).
func (cached *cacheStore) dropAll() {
	cached.Lock()
	defer cached.Unlock()
	for k, e := range cached.m {
		cached.dropEntryLocked(k, e)
	}
	cached.runs = nil
}

func (cached *cacheStore) dropEntryLocked(k cacheKey, e *cacheEntry) {
	delete(cached.m, k)
	cached.used -= e.bytes
	e.bytes = 0
	if e.path != "" {
		os.Remove(e.path)
	}
}

func (cached *cacheStore) dropRunLocked(run string) {
	for k, e := range cached.m {
		if k.run == run {
			cached.dropEntryLocked(k, e)
		}
	}
	cached.runs = slices.DeleteFunc(cached.runs, func(r string) bool { return r == run })
}
