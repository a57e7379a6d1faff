package dataset

import (
	"fmt"
	"io"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/internal/driverseam"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
)

// taskEnv is what one task's pipeline reads and writes shuffles with: the
// executor's shuffle (every executor has one — the local backend's
// in-process executor, coarse and fine executors), the blocks the
// driver listed for the task, and the application's state on the
// executor (its cached partitions).
type taskEnv struct {
	runID   string
	state   *state
	shuffle *shuffleenv.Env
	task    *stagetask.Task
	grants  []*shuffle.Grant
}

func (e *taskEnv) close() {
	for _, g := range e.grants {
		g.Release()
	}
}

// writerConfig is map output mapIndex of shuffleID in the executor's
// store, with the task's share of its shuffle memory.
// A map task of an indeterminate stage writes its stage attempt's
// generation, so that its output replaces one of an earlier, rolled-back
// run on this executor instead of being dropped for it.
func (e *taskEnv) writerConfig(def *shuffleDef, mapIndex, attempt int, order shuffle.Order) shuffle.Config {
	cfg := e.shuffle.WriterConfig(def.id, mapIndex, attempt, def.numReduces, order)
	if def.parent.info().order == indeterminate {
		cfg.Generation = e.task.StageAttempt + 1
	}
	e.grants = append(e.grants, cfg.Memory)
	return cfg
}

// read opens reduce partition p of shuffle id: every map output's block,
// merged in order (combining equal keys with combine) — same-host blocks
// from disk, the others fetched from their executors' servers, in bounded
// memory. A block it cannot read is a *mapoutput.FetchFailure naming it,
// so the driver's DAG core recomputes the map output.
func (e *taskEnv) read(tc *taskContext, id, p int, order shuffle.Order, combine shuffle.Combine) (shuffle.Stream, func(), error) {
	r, ok := e.task.ReadOf(id, p)
	if !ok {
		return nil, nil, fmt.Errorf("dataset: the driver sent no blocks of reduce partition %d of shuffle %d with this task", p, id)
	}
	if r.Missing != nil {
		return nil, nil, r.Missing
	}
	rd, err := e.shuffle.ReadBlocks(tc.ctx, id, p, r.Groups, order, combine)
	if err != nil {
		return nil, nil, err
	}
	m := rd.Metrics()
	task.MetricsFrom(tc.ctx).AddShuffle(task.ShuffleMetrics{LocalBlocks: m.LocalBlocks, RemoteBlocks: m.RemoteBlocks,
		LocalBytes: m.LocalBytes, RemoteBytes: m.RemoteBytes, FetchWait: m.FetchWait})
	return rd, func() { rd.Close() }, nil
}

// state is what the dataset layer keeps of one application in one
// process, in its runtime environment (framework/stagetask.Env): the
// partitions it cached, the broadcasts and payload parts its tasks
// loaded, the graphs they rebuilt, and on a driver the numbers of the
// broadcasts it published. The environment's owner creates and closes it
// (the local backend per Context, coarse and fine executors per
// application, a Context without an in-process executor for its driver
// side), so two Contexts in one process share none of it.
type state struct {
	cache     cacheStore
	loaded    loadedStore
	rebuilt   rebuiltStore
	published publishedSeq
}

// stateKey is the dataset layer's key in an environment.
type stateKey struct{}

func newState() *state {
	return &state{
		cache:   cacheStore{m: map[cacheKey]*cacheEntry{}},
		loaded:  loadedStore{m: map[string]*loadedBroadcast{}},
		rebuilt: rebuiltStore{m: map[[32]byte]*rebuildEntry{}},
	}
}

func newStateCloser() io.Closer { return newState() }

// stateOf is the dataset layer's state in env, made at first use.
func stateOf(env *stagetask.Env) *state {
	return env.State(stateKey{}, newStateCloser).(*state)
}

// driverState is the state of fc's environment (internal/driverseam), a
// fresh one without a Context (graph-building tests).
func driverState(fc *framework.Context) *state {
	if fc == nil {
		return newState()
	}
	return stateOf(driverseam.Of(fc).Env)
}

// Close releases the state when its application ends in this process:
// every cached partition (memory and files), every loaded broadcast and
// payload copy (files included), every rebuilt graph.
func (s *state) Close() error {
	s.cache.dropAll()
	s.loaded.dropAll()
	s.rebuilt.clear()
	return nil
}
