package driver

import (
	"fmt"
	"time"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/stagetask"
)

// Submission is a job of stages queued with Submit: a caller that steps
// the loop itself (Step) cannot wait in RunStages, whose submission waits
// for a step.
type Submission struct {
	in *submitInput
}

// Submit queues a job of stages, as RunStages does, without waiting: the
// next Step submits it. Its results are read with Result once Ended says
// so. A simulation submits jobs so on its own goroutine, on virtual time.
func (d *Driver) Submit(job *StageJob) (*Submission, error) {
	if _, err := stagetask.Lookup(job.Spec.Name); err != nil {
		return nil, fmt.Errorf("%w %q: %w", ErrInvalidJob, job.Spec.Name, err)
	}
	j := *job
	j.Spec.ResultsHeld = true
	if j.Spec.Pool == "" {
		j.Spec.Pool = d.pool
	}
	in := &submitInput{run: func() *jobRun { return newStagesRun(&j) }, done: make(chan struct{})}
	if !d.enqueue(in) {
		return nil, ErrStopped
	}
	return &Submission{in: in}, nil
}

// Ended reports whether the job ended (succeeded, failed or was refused
// at submission), as of the steps taken so far.
func (s *Submission) Ended() bool {
	select {
	case <-s.in.done:
	default:
		return false
	}
	if s.in.err != nil {
		return true
	}
	select {
	case <-s.in.js.done:
		return true
	default:
		return false
	}
}

// Result is the ended job's values in the order of Spec.Partitions, or
// its error.
func (s *Submission) Result() ([][]byte, error) {
	if !s.Ended() {
		return nil, fmt.Errorf("framework: job not ended")
	}
	if s.in.err != nil {
		return nil, s.in.err
	}
	js := s.in.js
	if js.err != nil {
		return nil, js.err
	}
	out := make([][]byte, len(js.results))
	for i, r := range js.results {
		out[i] = r.Output
	}
	return out, nil
}

// InspectMapOutputs calls fn with the DAG core's map-output tracker, on
// the loop (or directly when the loop is not started): a simulation
// checks its invariants against it between steps. fn must not keep the
// tracker nor change it.
func (d *Driver) InspectMapOutputs(fn func(t *mapoutput.Tracker, now time.Time)) {
	d.query(func(c *driverCore, now time.Time) { fn(c.dag.Tracker(), now) })
}
