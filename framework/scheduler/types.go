package scheduler

import (
	"fmt"
	"time"
)

// Level is a task locality level, ordered from most to least local like
// Spark's TaskLocality: ProcessLocal < NodeLocal < NoPref < RackLocal < Any.
type Level int

// Locality levels.
const (
	ProcessLocal Level = iota // same executor
	NodeLocal                 // same host
	NoPref                    // task has no preference
	RackLocal                 // same rack
	Any                       // anywhere
	numLevels
)

var levelNames = [...]string{"PROCESS_LOCAL", "NODE_LOCAL", "NO_PREF", "RACK_LOCAL", "ANY"}

func (l Level) String() string {
	if l >= 0 && l < numLevels {
		return levelNames[l]
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// ParseLevel parses the String form of a Level.
func ParseLevel(s string) (Level, error) {
	for i, n := range levelNames {
		if n == s {
			return Level(i), nil
		}
	}
	return 0, fmt.Errorf("scheduler: unknown locality level %q", s)
}

// Location is a preferred place for a task. An empty ExecutorID means the
// preference is for the host only.
type Location struct{ Host, ExecutorID string }

// WorkerOffer is free capacity on one executor.
type WorkerOffer struct {
	ExecutorID, Host, Rack string
	Cores                  int
}

// TaskSpec describes one task of a TaskSet. The task payload stays with the
// caller, keyed by (TaskSetID, Index).
type TaskSpec struct{ Preferred []Location }

// TaskSet is a set of independent tasks of one stage attempt.
type TaskSet struct {
	ID                    string // caller-chosen, unique among active task sets
	JobID                 int64  // FIFO priority: lower first
	StageID, StageAttempt int
	Pool                  string // "" = default pool
	Tasks                 []TaskSpec
}

// TaskID identifies one task attempt; unique for the scheduler's lifetime.
type TaskID uint64

// Launch tells the caller to run attempt Attempt of task Index of TaskSetID
// on ExecutorID.
type Launch struct {
	TaskID      TaskID
	TaskSetID   string
	Index       int
	Attempt     int
	ExecutorID  string
	Host        string
	Locality    Level
	Speculative bool
	CPUs        int
}

// FailureKind classifies why a task attempt failed.
type FailureKind int

// Failure kinds.
const (
	Exception       FailureKind = iota // the task returned an error
	Panic                              // the task panicked
	ResultTooLarge                     // result exceeded a size limit (deterministic)
	DecodeError                        // task or result could not be decoded (deterministic)
	UnknownFunction                    // the executor does not know the task function (deterministic)
	Killed                             // killed on request; never counts as a failure
	ExecutorLost                       // the executor went away
	ResultLost                         // the result could not be fetched
	LaunchFailed                       // the backend could not start the attempt
	// FetchFailed: the task could not read a shuffle block. The DAG core
	// resubmits the map output and then the stage; the task set becomes a
	// zombie (no more launches, running attempts finish) and the failure
	// never counts towards MaxTaskFailures.
	FetchFailed
	// NotRetryable: the task said no retry can fix its failure (an input
	// no executor can read); the task set aborts at once.
	NotRetryable
	// DiskFull: the executor's file system is full (or over its quota), so
	// the task cannot succeed there but may elsewhere: the executor is
	// excluded for the task set at once (whether or not exclusion on
	// failure is enabled), and the task set aborts at once when no other
	// known executor can run the task.
	DiskFull
)

var failureKindNames = [...]string{"Exception", "Panic", "ResultTooLarge", "DecodeError",
	"UnknownFunction", "Killed", "ExecutorLost", "ResultLost", "LaunchFailed", "FetchFailed", "NotRetryable", "DiskFull"}

func (k FailureKind) String() string {
	if k >= 0 && int(k) < len(failureKindNames) {
		return failureKindNames[k]
	}
	return fmt.Sprintf("FailureKind(%d)", int(k))
}

// Failure describes a failed attempt.
type Failure struct {
	Kind    FailureKind
	Message string
	Stack   string
	// ExitCausedByApp marks an ExecutorLost failure as the application's
	// fault (the executor exited because of the task); only then it counts
	// towards MaxTaskFailures.
	ExitCausedByApp bool
}

// countsTowardsFailures reports whether a failure counts against
// Config.MaxTaskFailures.
func (f *Failure) countsTowardsFailures() bool {
	switch f.Kind {
	case Killed, FetchFailed:
		return false
	case ExecutorLost:
		return f.ExitCausedByApp
	}
	return true
}

// deterministic reports whether retrying cannot help: the task set aborts.
func (f *Failure) deterministic() bool {
	switch f.Kind {
	case ResultTooLarge, DecodeError, UnknownFunction, NotRetryable:
		return true
	}
	return false
}

// State is the state reported for a task attempt.
type State int

// Task states.
const (
	Running State = iota
	Finished
	Failed
	KilledState
	Lost
)

var stateNames = [...]string{"TASK_RUNNING", "TASK_FINISHED", "TASK_FAILED", "TASK_KILLED", "TASK_LOST"}

func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Update is a status update for one attempt.
type Update struct {
	State      State
	Failure    *Failure // for Failed, Killed, Lost; nil gets a generic failure
	ResultSize int64    // bytes of the result, for Finished
}

// Event is an output of the scheduler for the driver.
type Event interface{ isEvent() }

// TaskSucceeded: index Index of TaskSetID succeeded (exactly once per index).
type TaskSucceeded struct {
	TaskID    TaskID
	TaskSetID string
	Index     int
	Attempt   int
}

// TaskFailed: an attempt failed; WillRetry tells whether the index is pending again.
type TaskFailed struct {
	TaskID    TaskID
	TaskSetID string
	Index     int
	Attempt   int
	Failure   Failure
	WillRetry bool
}

// TaskKilled: an attempt ended killed, or its result was discarded.
type TaskKilled struct {
	TaskID    TaskID
	TaskSetID string
	Index     int
	Attempt   int
	Reason    string
	WillRetry bool
}

// KillTask asks the backend to kill a running attempt.
type KillTask struct {
	TaskID     TaskID
	ExecutorID string
	Reason     string
}

// TaskSetFinished: every task of the set succeeded.
type TaskSetFinished struct{ TaskSetID string }

// TaskSetAborted: the set was aborted; no more launches.
type TaskSetAborted struct {
	TaskSetID   string
	Reason      string
	LastFailure *Failure
}

// ExecutorExcluded: an executor gets no tasks until Until (application-wide,
// TaskSetID empty), or no tasks of TaskSetID (Until zero).
type ExecutorExcluded struct {
	ExecutorID string
	Until      time.Time
	TaskSetID  string
}

// NodeExcluded is ExecutorExcluded for a whole host.
type NodeExcluded struct {
	Host      string
	Until     time.Time
	TaskSetID string
}

func (TaskSucceeded) isEvent()    {}
func (TaskFailed) isEvent()       {}
func (TaskKilled) isEvent()       {}
func (KillTask) isEvent()         {}
func (TaskSetFinished) isEvent()  {}
func (TaskSetAborted) isEvent()   {}
func (ExecutorExcluded) isEvent() {}
func (NodeExcluded) isEvent()     {}
