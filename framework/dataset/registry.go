package dataset

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/stagetask"
)

// ErrUnknownJob: no dataset job is registered under the name (the
// executor's binary or its registrations differ from the driver's).
var ErrUnknownJob = errors.New("dataset: unknown job")

// jobEntry is a registered job as the executor needs it: rebuild its graph
// from encoded arguments.
type jobEntry interface {
	name() string
	// build runs the body on b with the encoded arguments.
	//
	build(b *Builder, args []byte) error
}

var registry = struct {
	sync.Mutex
	jobs map[string]jobEntry
}{jobs: map[string]jobEntry{}}

// JobDef is a registered job: a name and a body that builds the job's
// graph of datasets and runs its actions, returning R to the driver. Run
// it on a driver with Run.
type JobDef[A, R any] struct {
	jobName string
	body    func(b *Builder, args A) (R, error)
}

// Job registers a job under name. Call it from init or a package-level
// var: the driver runs body to plan and run the job, and every executor
// that runs one of its tasks runs body again with the same arguments to
// rebuild the same graph, so the closures body passes to Map, Filter, …
// exist there too. It panics on an empty or duplicate name, and once
// flint.Main has started (a job registered later would be missing on
// executors).
func Job[A any](name string, body func(b *Builder, args A) error) *JobDef[A, struct{}] {
	if body == nil {
		panic("dataset: Job needs a body")
	}
	return JobResult(name, func(b *Builder, args A) (struct{}, error) { return struct{}{}, body(b, args) })
}

// JobResult is Job for a body that returns a result to the driver (on
// executors, which stop the body at their task's action, it is dropped).
func JobResult[A, R any](name string, body func(b *Builder, args A) (R, error)) *JobDef[A, R] {
	if name == "" || body == nil {
		panic("dataset: Job needs a name and a body")
	}
	if framework.RegistrationFrozen() {
		panic(fmt.Sprintf("dataset: Job %q registered after flint.Main started: register jobs from init or package-level vars, so executors have them too", name))
	}
	j := &JobDef[A, R]{jobName: name, body: body}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.jobs[name]; dup {
		panic(fmt.Sprintf("dataset: duplicate job %q", name))
	}
	registry.jobs[name] = j
	// The job's tasks run as its stage task function, which the task
	// registry's fingerprint (checked by executors at registration)
	// covers.
	stagetask.Register(name, stagetask.RunnerFunc(func(ctx context.Context, t *stagetask.Task, _ stagetask.Shuffle) (stagetask.Output, error) {
		return runTask(ctx, j, t)
	}))
	return j
}

// Name is the job's registered name.
func (j *JobDef[A, R]) Name() string { return j.jobName }

func (j *JobDef[A, R]) name() string { return j.jobName }

func (j *JobDef[A, R]) build(b *Builder, enc []byte) error {
	args, err := decodeArgs[A](enc)
	if err != nil {
		return fmt.Errorf("dataset: job %q: decode arguments: %w", j.jobName, err)
	}
	_, err = j.body(b, args)
	return err
}

// Run runs the job on fc with args: the body builds the graph and each of
// its actions runs as a job of stages on fc's executors. Arguments that
// would not reach the executors as they are (a func, a chan, an unexported
// field, a cycle) are refused first (ErrArgumentCannotTravel). It returns the
// body's result and error (the first failed action's error when the body
// dropped or wrapped it).
func (j *JobDef[A, R]) Run(ctx context.Context, fc *framework.Context, args A) (R, error) {
	var zero R
	if err := checkArgs(j.jobName, args); err != nil {
		return zero, err
	}
	enc, err := encodeArgs(args)
	if err != nil {
		return zero, fmt.Errorf("dataset: job %q: encode arguments (they must be gob-encodable): %w", j.jobName, err)
	}
	r, err := newRunner(ctx, fc, j.jobName)
	if err != nil {
		return zero, err
	}
	b := newDriverBuilder(j.jobName, enc, r, fc)
	defer r.close(b)
	res, err := j.body(b, args)
	if b.err != nil && (err == nil || errors.Is(err, errActionFailed)) {
		return res, b.err
	}
	return res, err
}

func lookupJob(name string) (jobEntry, error) {
	registry.Lock()
	defer registry.Unlock()
	if j, ok := registry.jobs[name]; ok {
		return j, nil
	}
	names := make([]string, 0, len(registry.jobs))
	for n := range registry.jobs {
		names = append(names, n)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("%w %q (registered: %v): the executor's binary is not the driver's, or the job is registered conditionally", ErrUnknownJob, name, names)
}

func encodeArgs[A any](a A) ([]byte, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&a); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func decodeArgs[A any](b []byte) (A, error) {
	var a A
	err := gob.NewDecoder(bytes.NewReader(b)).Decode(&a)
	return a, err
}
