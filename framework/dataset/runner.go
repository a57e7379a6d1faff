package dataset

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/driver"
	"github.com/flint-mesos/flint/internal/driverseam"
)

// runner runs a job's actions on the driver: each action is a job of
// stages (driver.StageJob) on the Context, planned and run by the
// driver loop's DAG core like any other — its stage attempts' tasks run
// on the executors, rebuilding the graph there, against the executors'
// shuffle; fetch failures and lost executors are the DAG core's to
// handle. Shuffle ids come from the Context (frozen with the job), so a
// map stage is shared by the run's later actions, and skipped when its
// outputs are all available (Spark's skipped stages).
type runner struct {
	ctx   context.Context
	fc    *framework.Context
	job   string
	runID string
	// st is the Context's state in this process (its environment's):
	// broadcast numbers, and in local mode the executor's cache
	st *state
	// payloads are the large parts of the run's tasks' payloads, shipped
	// as files (payload.go)
	payloads payloads
}

func newRunner(ctx context.Context, fc *framework.Context, job string) (*runner, error) {
	var id [8]byte
	rand.Read(id[:])
	return &runner{ctx: ctx, fc: fc, job: job, runID: hex.EncodeToString(id[:]), st: driverState(fc)}, nil
}

// close releases what the run left: its shuffles in the driver's
// map-output tracker, and the partitions it cached in the Context's
// environment (local mode's executor is this process).
func (r *runner) close(b *Builder) {
	if r.fc != nil && b != nil {
		for _, def := range b.shuffles {
			driverseam.Of(r.fc).Driver.ReleaseShuffle(def.id)
		}
		driverseam.Of(r.fc).Driver.ForgetCached(string(runPrefix(r.runID)))
		r.payloads.release(r.fc)
	}
	if b != nil {
		for _, bc := range b.broadcasts {
			if !bc.isDestroyed() {
				bc.release()
			}
		}
	}
	r.st.cache.dropRun(r.runID)
}

// jobWire is what every task of one action gets as its job's arguments:
// enough to rebuild the job's graph (arguments, frozen values, which
// action) and check it (fingerprint).
type jobWire struct {
	RunID       string
	Args        []byte
	Values      map[string][]byte
	Action      int
	Fingerprint []string
	// BroadcastSeq is the driver's last broadcast number when the action
	// was planned (broadcast.go, published).
	BroadcastSeq uint64
	// Parts are the arguments and values shipped as files instead, by
	// key (argsPart for Args; payload.go).
	Parts map[string]payloadRef
}

// runJob runs action idx (named: "count at dir/main.go:12") over final for
// parts (nil: all) and returns each partition's encoded result in order.
func (r *runner) runJob(b *Builder, idx int, action string, final node, parts []int) ([][]byte, error) {
	if err := b.flushLazy(); err != nil {
		return nil, err
	}
	n := final.info().parts
	if parts != nil {
		n = len(parts)
	}
	if n == 0 {
		return nil, nil
	}
	var args bytes.Buffer
	w := &jobWire{RunID: r.runID, Action: idx, Fingerprint: fingerprint(b.nodes)}
	if err := r.shipLarge(b, w); err != nil {
		return nil, err
	}
	w.BroadcastSeq = r.st.published.last()
	if err := gob.NewEncoder(&args).Encode(w); err != nil {
		return nil, fmt.Errorf("dataset: encode the job for its tasks: %w", err)
	}
	if err := checkTaskSize(r.fc, b, w, args.Len()); err != nil {
		return nil, err
	}
	var mu sync.Mutex
	var mapOuts [][]byte
	job := &driver.StageJob{Spec: b.jobSpec(final, parts, runPrefix(r.runID)), Args: args.Bytes(),
		Description: b.job + ": " + action, ResultStage: action,
		// map tasks' accumulator updates, applied once per successful
		// map task (Spark's rule for transformations)
		OnMapOutput: func(_, _ int, v []byte) {
			mu.Lock()
			mapOuts = append(mapOuts, v)
			mu.Unlock()
		}}
	vals, err := driverseam.Of(r.fc).Driver.RunStages(r.ctx, job)
	mu.Lock()
	defer mu.Unlock()
	for _, v := range mapOuts {
		out, derr := decodeOutput(v)
		if derr == nil {
			derr = b.applyUpdates(out.Accums)
		}
		if derr != nil && err == nil {
			err = derr
		}
	}
	if err != nil {
		return nil, err
	}
	results := make([][]byte, len(vals))
	for i, v := range vals {
		out, err := decodeOutput(v)
		if err != nil {
			return nil, err
		}
		results[i] = out.Result
		// once per partition of the action: RunStages returns the one
		// accepted result of each
		if err := b.applyUpdates(out.Accums); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// runPrefix starts the DAG core's id of every node of run runID.
func runPrefix(runID string) dagscheduler.NodeID { return dagscheduler.NodeID(runID + "/") }

func decodeOutput(v []byte) (*taskOutput, error) {
	var out taskOutput
	if err := gob.NewDecoder(bytes.NewReader(v)).Decode(&out); err != nil {
		return nil, fmt.Errorf("dataset: decode a task's output: %w", err)
	}
	return &out, nil
}

func defaultParallelism(fc *framework.Context) int {
	if fc.Config().IsSet("flint.default.parallelism") {
		return fc.Config().Int("flint.default.parallelism")
	}
	return max(2, fc.DefaultParallelism())
}
