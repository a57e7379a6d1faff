package stagetask

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/flint-mesos/flint/framework/codec"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
)

// FunctionPrefix starts the name of every job's stage task function:
// the tasks of job run as the task function FunctionPrefix+job.
const FunctionPrefix = "flint.stage:"

type registered struct {
	r Runner
	h task.Handle[[]byte, []byte]
}

var (
	runnersMu sync.RWMutex
	runners   = map[string]registered{}
)

// Register makes r run the tasks of job (a name the driver and every
// executor share, registered at init as task functions are). It also
// registers the job's task function (FunctionPrefix+job) in the task
// registry, so the registry's fingerprint, which executors check at
// registration, covers the job. An empty or duplicate name, or a
// registration after the registry was frozen (flint.Main started), panics.
func Register(job string, r Runner) {
	if job == "" || r == nil {
		panic("stagetask: Register needs a job name and a runner")
	}
	runnersMu.Lock()
	defer runnersMu.Unlock()
	if _, dup := runners[job]; dup {
		panic(fmt.Sprintf("stagetask: a runner for job %q is already registered", job))
	}
	h, err := task.Register(task.Default(), FunctionPrefix+job, func(ctx context.Context, in []byte) ([]byte, error) {
		return runEncoded(ctx, r, in)
	}, codec.Gob)
	if err != nil {
		panic(fmt.Sprintf("stagetask: register job %q: %v", job, err))
	}
	runners[job] = registered{r: r, h: h}
}

// Lookup returns the runner of job.
func Lookup(job string) (Runner, error) {
	reg, err := lookup(job)
	return reg.r, err
}

func lookup(job string) (registered, error) {
	runnersMu.RLock()
	defer runnersMu.RUnlock()
	if reg, ok := runners[job]; ok {
		return reg, nil
	}
	names := make([]string, 0, len(runners))
	for n := range runners {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) > 10 {
		names = append(names[:10], "…")
	}
	return registered{}, fmt.Errorf("stagetask: no runner registered for job %q (registered: %v)", job, names)
}

// Encoded is a stage task as a task of the task registry.
type Encoded struct {
	Function, Codec string
	Input           []byte
}

// Encode encodes t as an input of its job's task function.
func Encode(t *Task) (Encoded, error) {
	reg, err := lookup(t.Job)
	if err != nil {
		return Encoded{}, err
	}
	raw, err := t.MarshalBinary()
	if err != nil {
		return Encoded{}, err
	}
	in, err := reg.h.EncodeInput(raw)
	if err != nil {
		return Encoded{}, err
	}
	return Encoded{Function: reg.h.Name(), Codec: reg.h.Codec().Name(), Input: in}, nil
}

// DecodeOutput decodes what a task of job returned.
func DecodeOutput(job string, data []byte) (Output, error) {
	reg, err := lookup(job)
	if err != nil {
		return Output{}, err
	}
	raw, err := reg.h.DecodeOutput(data)
	if err != nil {
		return Output{}, err
	}
	var out Output
	if err := out.UnmarshalBinary(raw); err != nil {
		return Output{}, err
	}
	return out, nil
}

// ErrNoShuffle: the executor running a stage task has no shuffle.
var ErrNoShuffle = errors.New("stagetask: this executor has no shuffle (shuffleenv) to run stage tasks with")

// runEncoded runs an encoded task on this executor against its shuffle.
func runEncoded(ctx context.Context, r Runner, in []byte) ([]byte, error) {
	var t Task
	if err := t.UnmarshalBinary(in); err != nil {
		return nil, err
	}
	// a stage task's input is what its pipeline reads from its sources
	// (they add to it), not its encoded task
	task.MetricsFrom(ctx).AddInput(0, 0)
	env, ok := shuffleenv.FromContext(ctx)
	if !ok {
		return nil, ErrNoShuffle
	}
	var statuses *MapStatuses
	if app, ok := EnvFrom(ctx); ok {
		statuses = app.MapStatuses()
	} else {
		statuses = NewMapStatuses(func(context.Context, StatusRef) (*mapoutput.Snapshot, error) { return nil, ErrNoStatusSource })
	}
	statuses.Resolve(ctx, &t)
	out, err := Run(ctx, r, &t, EnvShuffle(env))
	if err != nil {
		return nil, err
	}
	if ff := out.FetchFailure; ff != nil {
		// the statuses it read may be stale: the next task reloads them
		// (Spark clears its cache on a fetch failure)
		statuses.Forget(ff.ShuffleID)
		// the task's error: the executor ends the attempt Failed with the
		// FetchFailed end reason naming the block
		return nil, ff
	}
	if t.Kind == Map && out.Location == (mapoutput.Location{}) {
		out.Location = env.Location()
	}
	return out.MarshalBinary()
}
