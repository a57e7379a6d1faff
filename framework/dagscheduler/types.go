package dagscheduler

import (
	"fmt"
	"time"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// TaskKind says what a task does with its pipeline's output.
type TaskKind int

// Task kinds.
const (
	MapTask    TaskKind = iota // writes the output as shuffle ShuffleID, reports a mapoutput.Status
	ResultTask                 // returns a value to the driver
)

func (k TaskKind) String() string {
	switch k {
	case MapTask:
		return "map"
	case ResultTask:
		return "result"
	}
	return fmt.Sprintf("TaskKind(%d)", int(k))
}

// TaskSet is one attempt of a stage: the tasks of its missing partitions.
// The driver submits it to the task core (SchedulerTaskSet) and sends each
// launched task (Task) to an executor. The executor rebuilds the graph of
// job Job and runs the pipeline ending at Node for the task's partition;
// a map task partitions that output into NumReduces blocks of shuffle
// ShuffleID, a result task returns it.
type TaskSet struct {
	ID         string // unique for the core's lifetime: "<stage>.<attempt>"
	JobID      int64  // the earliest active job needing the stage: FIFO priority
	StageID    int
	Attempt    int
	Kind       TaskKind
	Job        string // the job name the executors rebuild the graph from
	Node       NodeID // the last node of the stage's pipeline
	ShuffleID  int    // MapTask: the shuffle written
	NumReduces int    // MapTask: reduce partitions of that shuffle
	Epoch      int64  // map-output epoch when the attempt was made
	// Reads are the shuffles the pipeline reads (its stage's boundaries).
	// Which of their reduce partitions a task reads is ShuffleReads'.
	Reads []int
	Pool  string
	// Partitions of Node to compute, one task each; task i of the set
	// computes Partitions[i]. OutputIDs[i] is, for result tasks, the index
	// of that partition in the job's result (JobSpec.Partitions order);
	// nil when it is the partition itself.
	Partitions []int
	OutputIDs  []int
	Preferred  [][]scheduler.Location // per task

	node *nodeInfo // the stage's last node, with its lineage: ShuffleReads
}

// ShuffleRead is one reduce partition of one shuffle a task reads.
type ShuffleRead struct{ ShuffleID, Reduce int }

// ShuffleReads are the reduce partitions task i of the set reads: the
// core walks the lineage from the stage's node through its narrow
// dependencies (Spark's NarrowDependency.getParents: a union's range, a
// coalesce's groups) to the shuffles at the stage's boundary, each
// partition once, in walk order. The driver asks it once per launch.
func (ts *TaskSet) ShuffleReads(i int) []ShuffleRead {
	p := ts.Partitions[i]
	if ts.node == nil { // a set built outside the core: partition p of each
		out := make([]ShuffleRead, len(ts.Reads))
		for j, s := range ts.Reads {
			out[j] = ShuffleRead{s, p}
		}
		return out
	}
	return shuffleReads(ts.node, p)
}

// Task describes task i of the set, for the executor and for TaskEnded.
func (ts *TaskSet) Task(i int) Task {
	t := Task{Kind: ts.Kind, StageID: ts.StageID, StageAttempt: ts.Attempt, Partition: ts.Partitions[i],
		Job: ts.Job, Node: ts.Node, ShuffleID: ts.ShuffleID, NumReduces: ts.NumReduces, Epoch: ts.Epoch, JobID: ts.JobID}
	if ts.Kind == ResultTask {
		t.OutputID = ts.Partitions[i]
		if ts.OutputIDs != nil {
			t.OutputID = ts.OutputIDs[i]
		}
	}
	return t
}

// SchedulerTaskSet is the task core's view of the set.
func (ts *TaskSet) SchedulerTaskSet() scheduler.TaskSet {
	tasks := make([]scheduler.TaskSpec, len(ts.Partitions))
	for i := range tasks {
		tasks[i].Preferred = ts.Preferred[i]
	}
	return scheduler.TaskSet{ID: ts.ID, JobID: ts.JobID, StageID: ts.StageID, StageAttempt: ts.Attempt, Pool: ts.Pool, Tasks: tasks}
}

// Task is what an executor needs to run one task, besides the job's
// encoded arguments (which the driver sends once per job).
type Task struct {
	Kind         TaskKind
	JobID        int64
	StageID      int
	StageAttempt int
	Partition    int
	OutputID     int // ResultTask: index in the job's results
	Job          string
	Node         NodeID
	ShuffleID    int
	NumReduces   int
	Epoch        int64
}

func (t Task) String() string {
	return fmt.Sprintf("%v task %d.%d p%d", t.Kind, t.StageID, t.StageAttempt, t.Partition)
}

// EndReason is how a task attempt ended, as the DAG core needs to know it.
type EndReason int

// End reasons.
const (
	Succeeded   EndReason = iota // the task's output is ready (MapStatus for map tasks)
	FetchFailed                  // the task could not read a shuffle block (FetchFailure)
	Failed                       // any other failure; the task core retries it or aborts the set
)

// TaskEnd reports the end of one task attempt, from the task core's
// events and the executor's status update.
type TaskEnd struct {
	Task       Task
	Reason     EndReason
	ExecutorID string
	Host       string
	// MapStatus is set for a successful map task.
	MapStatus *mapoutput.Status
	// FetchFailure is set for Reason == FetchFailed.
	FetchFailure *mapoutput.FetchFailure
	Message      string // Failed: why, for events
}

// Event is an output of the DAG core. Events of one call are ordered: the
// driver applies them in order.
type Event interface{ isEvent() }

// SubmitTaskSet: hand the set to the task core.
type SubmitTaskSet struct{ TaskSet *TaskSet }

// CancelTaskSet: abort the set in the task core and kill its running
// attempts (its job was cancelled or failed, or no job needs it any more).
type CancelTaskSet struct {
	TaskSetID string
	Reason    string
	// Cause is the reason CancelJob or CancelStage was given, without the
	// job it names (the task set's own abort reason); empty otherwise.
	Cause string
}

// ResultAccepted: the result of this task is the job's result OutputID;
// keep it. A successful result task without ResultAccepted in the same
// batch must be dropped (its partition was already computed).
type ResultAccepted struct {
	JobID    int64
	OutputID int
	Task     Task
}

// ResultsRevoked: the job's accepted results were computed from a run of
// an indeterminate stage that is being rolled back (JobSpec.ResultsHeld):
// drop them; every partition will be accepted again.
type ResultsRevoked struct {
	JobID  int64
	Count  int
	Reason string
}

// JobStarted: a job was accepted with these stages; Skipped are stages of
// its graph whose output was already available (Spark's skipped stages).
type JobStarted struct {
	JobID   int64
	Name    string
	Stages  []int
	Skipped []int
}

// JobSucceeded: every result of the job was accepted.
type JobSucceeded struct{ JobID int64 }

// JobFailed: the job ended without all its results.
type JobFailed struct {
	JobID     int64
	Reason    string
	Cancelled bool
}

// StageSubmitted: a stage attempt started with NumTasks tasks.
type StageSubmitted struct {
	StageID, Attempt int
	Name             string
	NumTasks         int
	Parents          []int
}

// StageCompleted: a stage attempt ended; Failure is empty on success.
// WillRetry tells that a failed attempt will be resubmitted.
type StageCompleted struct {
	StageID, Attempt int
	Failure          string
	WillRetry        bool
}

// OutputsLost: map outputs were unregistered.
type OutputsLost struct {
	ShuffleID int
	MapIndex  []int
	Reason    string
}

// ResubmitScheduled: failed stages will be resubmitted by the first Tick
// at or after At (Spark batches fetch failures for 200 ms).
type ResubmitScheduled struct{ At time.Time }

// TaskIgnored: a task end that the core dropped (stale attempt, bogus
// epoch, partition already done, stage gone), and why.
type TaskIgnored struct {
	Task   Task
	Reason string
}

func (SubmitTaskSet) isEvent()     {}
func (CancelTaskSet) isEvent()     {}
func (ResultsRevoked) isEvent()    {}
func (ResultAccepted) isEvent()    {}
func (JobStarted) isEvent()        {}
func (JobSucceeded) isEvent()      {}
func (JobFailed) isEvent()         {}
func (StageSubmitted) isEvent()    {}
func (StageCompleted) isEvent()    {}
func (OutputsLost) isEvent()       {}
func (ResubmitScheduled) isEvent() {}
func (TaskIgnored) isEvent()       {}
