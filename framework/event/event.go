package event

import "time"

// Event is one of the concrete event types below.
type Event interface{ eventTime() time.Time }

// JobStart is posted when RunJob submits a job.
type JobStart struct {
	Time     time.Time
	JobID    int64
	Name     string
	StageIDs []int
	NumTasks int
	// Stages describes the job's stages with their parents, when the driver
	// knows its DAG up front (optional: nil means one stage per StageIDs
	// entry, no edges). The UI draws the job's DAG from it.
	Stages []StageInfo
}

// StageInfo is one stage of a job's DAG as JobStart announces it.
type StageInfo struct {
	StageID   int
	Name      string
	NumTasks  int
	ParentIDs []int
}

// JobEnd is posted when a job finishes; Err is nil on success.
type JobEnd struct {
	Time  time.Time
	JobID int64
	Err   error
}

// StageSubmitted is posted when a stage's task set is handed to the scheduler.
type StageSubmitted struct {
	Time     time.Time
	JobID    int64
	StageID  int
	Attempt  int
	Name     string
	NumTasks int
	// ParentIDs are the stages this one reads from (empty for a job of
	// one stage).
	ParentIDs []int
}

// StageCompleted is posted when a stage ends; FailureReason is empty on success.
type StageCompleted struct {
	Time          time.Time
	JobID         int64
	StageID       int
	Attempt       int
	FailureReason string
}

// TaskStart is posted when a task attempt is launched on an executor.
type TaskStart struct {
	Time        time.Time
	StageID     int
	TaskID      uint64
	Index       int
	Attempt     int
	ExecutorID  string
	Host        string
	Locality    string
	Speculative bool
	// StageAttempt is the attempt of the stage the task belongs to.
	StageAttempt int
}

// TaskEnd is posted when a task attempt reaches a terminal state.
type TaskEnd struct {
	Time       time.Time
	StageID    int
	TaskID     uint64
	Index      int
	Attempt    int
	ExecutorID string
	// State is FINISHED, FAILED, KILLED or LOST.
	State string
	// Reason is the failure or kill reason; empty on success.
	Reason string
	// Stack is a panicked task's stack, trimmed to the frames that
	// matter (task.TrimStack); empty otherwise.
	Stack      string
	RunTime    time.Duration
	ResultSize int64
	// StageAttempt is the attempt of the stage the task belongs to.
	StageAttempt int
	// DecodeTime and EncodeTime are the executor's input decoding and
	// result encoding times; InputSize is what the task read from its data
	// source in bytes (a dataset source's split; a registered function's
	// input).
	DecodeTime, EncodeTime time.Duration
	InputSize              int64
	// InputRecords are the records the task read from its data source
	// (a dataset source's lines; 1 for a registered function's input).
	InputRecords int64
	// ShuffleReadBytes and ShuffleWriteBytes are the shuffle bytes the
	// task read (local and remote) and wrote (its committed data files).
	ShuffleReadBytes, ShuffleWriteBytes int64
	// ShuffleWrite and ShuffleRead detail them: a map task's records
	// written and spills, a reduce task's local and fetched blocks and its
	// wait for them.
	ShuffleWrite ShuffleWriteMetrics
	ShuffleRead  ShuffleReadMetrics
}

// ShuffleWriteMetrics are a map task's shuffle write figures.
type ShuffleWriteMetrics struct {
	Records    int64
	Spills     int64 // sorted runs spilled to disk
	SpillBytes int64
	WriteTime  time.Duration
}

// ShuffleReadMetrics are a reduce task's shuffle read figures.
type ShuffleReadMetrics struct {
	LocalBlocks, RemoteBlocks int64
	LocalBytes, RemoteBytes   int64
	FetchWait                 time.Duration
}

// ExecutorAdded is posted when a backend reports a new executor.
type ExecutorAdded struct {
	Time       time.Time
	ExecutorID string
	Host       string
	Cores      int
}

// ExecutorRemoved is posted when an executor is lost or stopped.
type ExecutorRemoved struct {
	Time       time.Time
	ExecutorID string
	Reason     string
}

func (e JobStart) eventTime() time.Time        { return e.Time }
func (e JobEnd) eventTime() time.Time          { return e.Time }
func (e StageSubmitted) eventTime() time.Time  { return e.Time }
func (e StageCompleted) eventTime() time.Time  { return e.Time }
func (e TaskStart) eventTime() time.Time       { return e.Time }
func (e TaskEnd) eventTime() time.Time         { return e.Time }
func (e ExecutorAdded) eventTime() time.Time   { return e.Time }
func (e ExecutorRemoved) eventTime() time.Time { return e.Time }

// TimeOf returns the time an event happened.
func TimeOf(e Event) time.Time { return e.eventTime() }

// Listener receives events. OnEvent is called from one goroutine per
// listener, in posting order.
type Listener interface {
	OnEvent(Event)
}

// ListenerFunc adapts a function to Listener.
type ListenerFunc func(Event)

// OnEvent calls f(e).
func (f ListenerFunc) OnEvent(e Event) { f(e) }
