package dataset

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/framework/task"
)

// taskOutput is what a task returns as its Output.Value: a result task's
// encoded part of the action's result, and any task's accumulator
// updates, applied by the driver once per partition of an action (or per
// successful map task; accumulator.go).
type taskOutput struct {
	Result []byte
	Accums []accUpdate
}

// rebuiltStore caches the graphs an application's tasks rebuilt on this
// executor (its environment's: state), by (run, action): the body runs
// once per executor per action, not once per task.
type rebuiltStore struct {
	sync.Mutex
	m     map[[32]byte]*rebuildEntry
	order [][32]byte
}

// clear forgets every rebuilt graph (the application ended here).
func (r *rebuiltStore) clear() {
	r.Lock()
	defer r.Unlock()
	clear(r.m)
	r.order = nil
}

type rebuildEntry struct {
	once sync.Once
	c    *capture
	err  error
}

const maxRebuilt = 64

func rebuildKey(job string, w *jobWire) [32]byte {
	return sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%d", job, w.RunID, w.Action)))
}

// rebuild replays j's body up to the task's action, once per (run,
// action) in the application's state s, and checks the graph against the
// driver's.
func rebuild(s *state, j jobEntry, w *jobWire) (*capture, error) {
	rebuilt := &s.rebuilt
	key := rebuildKey(j.name(), w)
	rebuilt.Lock()
	e := rebuilt.m[key]
	if e == nil {
		e = &rebuildEntry{}
		rebuilt.m[key] = e
		rebuilt.order = append(rebuilt.order, key)
		if len(rebuilt.order) > maxRebuilt {
			delete(rebuilt.m, rebuilt.order[0])
			rebuilt.order = rebuilt.order[1:]
		}
	}
	rebuilt.Unlock()
	e.once.Do(func() { e.c, e.err = replayBody(s, j, w) })
	return e.c, e.err
}

// replayBody rebuilds j's graph up to w's action, in the application's
// state s (its broadcasts).
func replayBody(s *state, j jobEntry, w *jobWire) (c *capture, err error) {
	b := newReplayBuilder(j.name(), w.Args, w.Values, w.Action)
	b.st = s
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("dataset: job %q panicked while its graph was rebuilt on this executor: %v\n%s", j.name(), p, task.TrimStack(debug.Stack()))
		}
	}()
	berr := j.build(b, w.Args)
	c = b.replay.captured
	if c == nil {
		if berr != nil && !errors.Is(berr, errReplayed) {
			return nil, fmt.Errorf("dataset: job %q: rebuilding the graph on this executor failed before action %d: %w", j.name(), w.Action, berr)
		}
		return nil, fmt.Errorf("%w in job %q: the body ended after %d actions on this executor, but the driver ran action %d; a job body must take the same path in every process",
			ErrGraphMismatch, j.name(), b.actions, w.Action)
	}
	if err := compareFingerprints(j.name(), w.Fingerprint, fingerprint(c.nodes)); err != nil {
		// a body building another graph here will build it again
		return nil, task.NotRetryable(err)
	}
	return c, nil
}

// runTask runs one task of job j on this executor, against its shuffle.
func runTask(ctx context.Context, j jobEntry, t *stagetask.Task) (stagetask.Output, error) {
	var w jobWire
	if err := gob.NewDecoder(bytes.NewReader(t.Args)).Decode(&w); err != nil {
		return stagetask.Output{}, fmt.Errorf("dataset: job %q: decode the task's job: %w", j.name(), err)
	}
	xe, ok := stagetask.EnvFrom(ctx)
	if !ok || xe.Shuffle() == nil {
		return stagetask.Output{}, stagetask.ErrNoShuffle
	}
	sh, st := xe.Shuffle(), stateOf(xe)
	st.loaded.dropReleased(ctx, w.BroadcastSeq)
	if err := st.loaded.fetchParts(ctx, j.name(), &w); err != nil {
		return stagetask.Output{}, err
	}
	c, err := rebuild(st, j, &w)
	if err != nil {
		return stagetask.Output{}, err
	}
	if len(c.b.accums) > 0 {
		// a job with accumulators: this task gets its own replay of the
		// body, so its updates are its own
		if c, err = replayBody(st, j, &w); err != nil {
			return stagetask.Output{}, err
		}
	}
	if err := st.loaded.noteBroadcastFiles(ctx, c.b); err != nil {
		return stagetask.Output{}, err
	}
	node, ok := strings.CutPrefix(t.Node, string(runPrefix(w.RunID)))
	if !ok {
		return stagetask.Output{}, fmt.Errorf("%w in job %q: the driver's task runs node %s, not one of run %s", ErrGraphMismatch, j.name(), t.Node, w.RunID)
	}
	st.cache.dropUnpersisted(w.RunID, c.b.nodes)
	env := &taskEnv{runID: w.RunID, state: st, shuffle: sh, task: t}
	defer env.close()
	tc := &taskContext{ctx: ctx, env: env, storage: c.b.settings.StorageMemory}
	out, res, err := runPipeline(tc, c, t, dagscheduler.NodeID(node))
	if err != nil {
		return stagetask.Output{}, err
	}
	for _, cp := range tc.cachedParts() {
		out.Cached = append(out.Cached, stagetask.CachedPartition{Node: string(runPrefix(w.RunID) + cp.node), Partition: cp.part})
	}
	accs, err := accumulatorUpdates(c.b)
	if err != nil {
		return stagetask.Output{}, err
	}
	if t.Kind == stagetask.Result || len(accs) > 0 {
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(&taskOutput{Result: res, Accums: accs}); err != nil {
			return stagetask.Output{}, fmt.Errorf("dataset: encode the task's output: %w", err)
		}
		out.Value = buf.Bytes()
	}
	return out, nil
}

// runPipeline runs the task's pipeline: a result task's part of the
// action's result, or a map task's shuffle output.
func runPipeline(tc *taskContext, c *capture, t *stagetask.Task, node dagscheduler.NodeID) (stagetask.Output, []byte, error) {
	if t.Kind == stagetask.Result {
		if node != c.final.info().id {
			return stagetask.Output{}, nil, fmt.Errorf("%w in job %q: the driver's result task runs node %s, this executor's action is over %s",
				ErrGraphMismatch, c.b.job, node, c.final.info().id)
		}
		res, err := c.perPart(tc, t.Partition)
		return stagetask.Output{}, res, err
	}
	def := c.b.shuffleByID(t.ShuffleID)
	if def == nil {
		return stagetask.Output{}, nil, fmt.Errorf("%w in job %q: the driver's map task writes shuffle %d, which this executor's graph does not have",
			ErrGraphMismatch, c.b.job, t.ShuffleID)
	}
	if def.parent.info().id != node {
		return stagetask.Output{}, nil, fmt.Errorf("%w in job %q: shuffle %d is written from %s on the driver, from %s on this executor",
			ErrGraphMismatch, c.b.job, t.ShuffleID, node, def.parent.info().id)
	}
	res, err := def.write(tc, t.Partition, int(t.Attempt))
	if err != nil {
		return stagetask.Output{}, nil, err
	}
	task.MetricsFrom(tc.ctx).AddShuffle(task.ShuffleMetrics{RecordsWritten: res.RecordsWritten, BytesWritten: res.BytesWritten,
		Spills: res.Spills, SpillBytes: res.SpillBytes, WriteTime: res.WriteTime})
	return stagetask.Output{Sizes: res.Sizes}, nil, nil
}
