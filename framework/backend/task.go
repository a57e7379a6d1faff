package backend

import (
	"time"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/scheduler"
	"github.com/flint-mesos/flint/framework/task"
)

// TaskDescription is one task attempt the driver loop placed on an
// executor (whose cores it has already counted as taken).
type TaskDescription struct {
	TaskID      uint64
	Attempt     int
	Index       int // the task's index in its job
	TaskSetID   string
	JobID       int64
	StageID     int
	Function    string // registered task function
	Codec       string // codec of Input and of the result
	Input       []byte
	CPUs        int
	ExecutorID  string
	Speculative bool
	// Files are the files added when the task's stage was submitted;
	// FilesToken is the executor's credential for the served ones.
	Files      []*File
	FilesToken string
}

// StatusUpdate is a task attempt's state as a backend reports it. State and
// Failure use the scheduling core's types: there is one set of task states
// and one of failure kinds, the wire's enums are converted at the transport.
type StatusUpdate struct {
	TaskID     uint64
	Attempt    int
	ExecutorID string
	State      scheduler.State
	// Result is the inline result of a Finished attempt; Indirect, when
	// set, names a result the executor kept for the driver to fetch.
	Result   []byte
	Indirect *IndirectResult
	// Failure says why a Failed, Killed or Lost attempt ended; nil gets a
	// generic failure of the state's kind (FailureKindOf).
	Failure *scheduler.Failure
	// FetchFailed names the shuffle block a Failed attempt could not read
	// when Failure's kind is scheduler.FetchFailed (Spark's FetchFailed
	// end reason); the driver's DAG core recomputes its map output.
	FetchFailed *mapoutput.FetchFailure
	Metrics     TaskMetrics
}

// IndirectResult is a result an executor kept (Spark's IndirectTaskResult).
type IndirectResult struct {
	BlockID    string
	Size       int64
	ExecutorID string
	SHA256     string // hex; empty when the executor sent none
}

// TaskMetrics are an attempt's figures as its executor measured them.
type TaskMetrics struct {
	RunTime    time.Duration
	DecodeTime time.Duration
	EncodeTime time.Duration
	ResultSize int64
	InputSize  int64
	// InputRecords are the records the task read from its data source.
	InputRecords int64
	Shuffle      task.ShuffleMetrics
}

// FailureKindOf is the kind of failure an attempt that ended in state st
// without saying why gets: Killed for a kill, ExecutorLost for a loss, an
// Exception otherwise.
func FailureKindOf(st scheduler.State) scheduler.FailureKind {
	switch st {
	case scheduler.KilledState:
		return scheduler.Killed
	case scheduler.Lost:
		return scheduler.ExecutorLost
	}
	return scheduler.Exception
}

// File is a file a task lists (Context.AddFile): its executor fetches it
// once, before the first task listing it runs.
type File struct {
	Name       string // the name tasks find it by (TaskContext.File)
	URI        string // where to fetch it from (http(s)://, file://)
	SHA256     string // lowercase hex; empty skips the check
	Size       int64  // 0 when unknown
	Executable bool   // set the execute bit after fetching
	Extract    bool   // unpack the archive after fetching
	Served     bool   // the driver's file server serves it: fetched with FilesToken
}
