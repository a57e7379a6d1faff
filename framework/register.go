package framework

import (
	"context"
	"fmt"

	"github.com/flint-mesos/flint/framework/codec"
	"github.com/flint-mesos/flint/framework/task"
)

// Func is a registered task function with typed input and output.
type Func[In, Out any] struct {
	h task.Handle[In, Out]
}

// RegisterOption changes how a function is registered.
type RegisterOption func(*registerOptions)

type registerOptions struct {
	codec codec.Codec
}

// WithCodec encodes the function's input and output with c instead of gob.
func WithCodec(c codec.Codec) RegisterOption {
	return func(o *registerOptions) { o.codec = c }
}

// Register adds fn to the process-wide registry under name. Call it from init
// or a package-level var so drivers and executors built from the same binary
// agree. It panics on an empty or duplicate name, like http.Handle.
func Register[In, Out any](name string, fn func(context.Context, In) (Out, error), opts ...RegisterOption) Func[In, Out] {
	o := registerOptions{codec: codec.Gob}
	for _, opt := range opts {
		opt(&o)
	}
	h, err := task.Register(task.Default(), name, fn, o.codec)
	if err != nil {
		panic(err)
	}
	return Func[In, Out]{h: h}
}

// Name is the name the function is registered under.
func (f Func[In, Out]) Name() string { return f.h.Name() }

// Task builds a task that applies f to in, optionally preferring locations.
func (f Func[In, Out]) Task(in In, prefer ...Location) (Task, error) {
	b, err := f.h.EncodeInput(in)
	if err != nil {
		return Task{}, fmt.Errorf("framework: encode input for %s: %w", f.Name(), err)
	}
	return Task{Function: f.Name(), Codec: f.h.Codec().Name(), Input: b, Preferred: prefer}, nil
}

// Output decodes a result of f.
func (f Func[In, Out]) Output(r Result) (Out, error) {
	out, err := f.h.DecodeOutput(r.Output)
	if err != nil {
		return out, fmt.Errorf("framework: decode output of %s task %d: %w", f.Name(), r.Index, err)
	}
	return out, nil
}

// Map runs f over inputs as one job and returns the outputs in input order.
func Map[In, Out any](ctx context.Context, fc *Context, f Func[In, Out], inputs []In, opts ...JobOption) ([]Out, error) {
	job := &Job{Name: f.Name(), Tasks: make([]Task, len(inputs))}
	for _, opt := range opts {
		opt(job)
	}
	for i, in := range inputs {
		t, err := f.Task(in)
		if err != nil {
			return nil, err
		}
		job.Tasks[i] = t
	}
	results, err := fc.RunJob(ctx, job)
	if err != nil {
		return nil, err
	}
	outs := make([]Out, len(results))
	for i, r := range results {
		if outs[i], err = f.Output(r); err != nil {
			return nil, err
		}
	}
	return outs, nil
}

// JobOption adjusts a job built by Map.
type JobOption func(*Job)

// WithJobName names the job (the default is the function's name).
func WithJobName(name string) JobOption { return func(j *Job) { j.Name = name } }

// WithPool runs the job in a FAIR scheduler pool.
func WithPool(pool string) JobOption { return func(j *Job) { j.Pool = pool } }

// FreezeRegistry makes later Register calls (and dataset.Job) panic:
// flint.Main calls it before it runs the driver or an executor, since a
// function registered after the program started would be missing on
// executors.
func FreezeRegistry() { task.Default().Freeze() }

// RegistrationFrozen reports whether FreezeRegistry was called.
func RegistrationFrozen() bool { return task.Default().Frozen() }
