package framework

import "github.com/flint-mesos/flint/framework/driver"

// Location is a task's placement preference: a host, or an executor on a host.
type Location = driver.Location

// Task is one unit of work: a registered function applied to encoded input.
// Build tasks with Func.Task so the input is encoded with the right codec.
type Task = driver.Task

// Job is a set of tasks run together as one stage. Results come back in the
// order of Tasks.
type Job = driver.Job

// TaskMetrics are what an executor measured for a successful task.
type TaskMetrics = driver.TaskMetrics

// Result is the output of one task of a job.
type Result = driver.Result
