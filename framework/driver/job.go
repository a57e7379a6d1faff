package driver

import (
	"time"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// Location is a task's placement preference: a host, or an executor on a host.
type Location = scheduler.Location

// Task is one unit of work: a registered function applied to encoded input.
// Build tasks with Func.Task so the input is encoded with the right codec.
type Task struct {
	Function  string
	Codec     string
	Input     []byte
	Preferred []Location
	files     []*backend.File // a stage task's files beyond its stage's (its map statuses)
}

// Job is a set of tasks run together as one stage. Results come back in the
// order of Tasks.
type Job struct {
	Name string
	// Pool is the FAIR scheduler pool; empty means flint.scheduler.pool.
	Pool  string
	Tasks []Task
}

// TaskMetrics are what an executor measured for a successful task.
type TaskMetrics struct {
	RunTime    time.Duration
	DecodeTime time.Duration
	EncodeTime time.Duration
	InputSize  int64
	ResultSize int64
}

// Result is the output of one task of a job.
type Result struct {
	Index      int
	Attempt    int
	ExecutorID string
	Output     []byte
	Metrics    TaskMetrics
}
