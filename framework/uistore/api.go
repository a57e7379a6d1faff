package uistore

import (
	"encoding/json"
	"fmt"
	"time"
)

// DateLayout is how Spark's REST API writes dates: milliseconds, always GMT.
const DateLayout = "2006-01-02T15:04:05.000GMT"

// Date is a time written in DateLayout.
type Date struct{ time.Time }

// NewDate returns t as a Date, or nil when t is zero (Spark's Option[Date]).
func NewDate(t time.Time) *Date {
	if t.IsZero() {
		return nil
	}
	return &Date{t}
}

// MarshalJSON writes d in DateLayout, in UTC.
func (d Date) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.UTC().Format(DateLayout))
}

// UnmarshalJSON reads a date in DateLayout.
func (d *Date) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("uistore: date: %w", err)
	}
	t, err := time.Parse(DateLayout, s)
	if err != nil {
		return fmt.Errorf("uistore: date %q: %w", s, err)
	}
	d.Time = t
	return nil
}

// Job statuses (Spark's JobExecutionStatus).
const (
	JobRunning   = "RUNNING"
	JobSucceeded = "SUCCEEDED"
	JobFailed    = "FAILED"
	JobUnknown   = "UNKNOWN"
)

// Stage statuses (Spark's StageStatus).
const (
	StageActive   = "ACTIVE"
	StageComplete = "COMPLETE"
	StageFailed   = "FAILED"
	StagePending  = "PENDING"
	StageSkipped  = "SKIPPED"
)

// Task statuses (Spark's TaskInfo.status).
const (
	TaskRunning = "RUNNING"
	TaskSuccess = "SUCCESS"
	TaskFailed  = "FAILED"
	TaskKilled  = "KILLED"
)

// ApplicationInfo is Spark's ApplicationInfo.
type ApplicationInfo struct {
	ID                  string                   `json:"id"`
	Name                string                   `json:"name"`
	CoresGranted        *int                     `json:"coresGranted,omitempty"`
	MaxCores            *int                     `json:"maxCores,omitempty"`
	CoresPerExecutor    *int                     `json:"coresPerExecutor,omitempty"`
	MemoryPerExecutorMB *int                     `json:"memoryPerExecutorMB,omitempty"`
	Attempts            []ApplicationAttemptInfo `json:"attempts"`
}

// ApplicationAttemptInfo is Spark's ApplicationAttemptInfo. Flint
// applications have one attempt and no attempt id.
type ApplicationAttemptInfo struct {
	StartTime        Date   `json:"startTime"`
	EndTime          Date   `json:"endTime"`
	LastUpdated      Date   `json:"lastUpdated"`
	Duration         int64  `json:"duration"`
	SparkUser        string `json:"sparkUser"`
	Completed        bool   `json:"completed"`
	AppSparkVersion  string `json:"appSparkVersion"`
	StartTimeEpoch   int64  `json:"startTimeEpoch"`
	EndTimeEpoch     int64  `json:"endTimeEpoch"`
	LastUpdatedEpoch int64  `json:"lastUpdatedEpoch"`
}

// JobData is Spark's JobData.
type JobData struct {
	JobID               int64          `json:"jobId"`
	Name                string         `json:"name"`
	SubmissionTime      *Date          `json:"submissionTime,omitempty"`
	CompletionTime      *Date          `json:"completionTime,omitempty"`
	StageIDs            []int          `json:"stageIds"`
	Status              string         `json:"status"`
	NumTasks            int            `json:"numTasks"`
	NumActiveTasks      int            `json:"numActiveTasks"`
	NumCompletedTasks   int            `json:"numCompletedTasks"`
	NumSkippedTasks     int            `json:"numSkippedTasks"`
	NumFailedTasks      int            `json:"numFailedTasks"`
	NumKilledTasks      int            `json:"numKilledTasks"`
	NumCompletedIndices int            `json:"numCompletedIndices"`
	NumActiveStages     int            `json:"numActiveStages"`
	NumCompletedStages  int            `json:"numCompletedStages"`
	NumSkippedStages    int            `json:"numSkippedStages"`
	NumFailedStages     int            `json:"numFailedStages"`
	KilledTasksSummary  map[string]int `json:"killedTasksSummary"`
	// FailureReason is Flint's: why a failed job failed (Spark shows it
	// only on the failed stage).
	FailureReason string `json:"failureReason,omitempty"`
}

// StageData is Spark's StageData (the fields Flint has).
type StageData struct {
	Status                string                          `json:"status"`
	StageID               int                             `json:"stageId"`
	AttemptID             int                             `json:"attemptId"`
	NumTasks              int                             `json:"numTasks"`
	NumActiveTasks        int                             `json:"numActiveTasks"`
	NumCompleteTasks      int                             `json:"numCompleteTasks"`
	NumFailedTasks        int                             `json:"numFailedTasks"`
	NumKilledTasks        int                             `json:"numKilledTasks"`
	NumCompletedIndices   int                             `json:"numCompletedIndices"`
	ExecutorRunTime       int64                           `json:"executorRunTime"`
	ExecutorDeserialize   int64                           `json:"executorDeserializeTime"`
	ResultSerialization   int64                           `json:"resultSerializationTime"`
	ResultSize            int64                           `json:"resultSize"`
	SubmissionTime        *Date                           `json:"submissionTime,omitempty"`
	FirstTaskLaunchedTime *Date                           `json:"firstTaskLaunchedTime,omitempty"`
	CompletionTime        *Date                           `json:"completionTime,omitempty"`
	FailureReason         string                          `json:"failureReason,omitempty"`
	InputBytes            int64                           `json:"inputBytes"`
	InputRecords          int64                           `json:"inputRecords"`
	ShuffleReadBytes      int64                           `json:"shuffleReadBytes"`
	ShuffleWriteBytes     int64                           `json:"shuffleWriteBytes"`
	Name                  string                          `json:"name"`
	Details               string                          `json:"details"`
	SchedulingPool        string                          `json:"schedulingPool"`
	Tasks                 map[string]TaskData             `json:"tasks,omitempty"`
	ExecutorSummary       map[string]ExecutorStageSummary `json:"executorSummary,omitempty"`
	KilledTasksSummary    map[string]int                  `json:"killedTasksSummary"`
	// ParentIDs and JobID are Flint's: the stages this one reads from and
	// the job it belongs to (Spark keeps both in its UI's RDD graph).
	ParentIDs []int `json:"parentIds"`
	JobID     int64 `json:"jobId"`
}

// ExecutorStageSummary is Spark's ExecutorStageSummary (the fields Flint has).
type ExecutorStageSummary struct {
	TaskTime       int64 `json:"taskTime"`
	FailedTasks    int   `json:"failedTasks"`
	SucceededTasks int   `json:"succeededTasks"`
	KilledTasks    int   `json:"killedTasks"`
	InputBytes     int64 `json:"inputBytes"`
	ShuffleRead    int64 `json:"shuffleRead"`
	ShuffleWrite   int64 `json:"shuffleWrite"`
}

// TaskData is Spark's TaskData.
type TaskData struct {
	TaskID       uint64       `json:"taskId"`
	Index        int          `json:"index"`
	Attempt      int          `json:"attempt"`
	PartitionID  int          `json:"partitionId"`
	LaunchTime   Date         `json:"launchTime"`
	Duration     *int64       `json:"duration,omitempty"`
	ExecutorID   string       `json:"executorId"`
	Host         string       `json:"host"`
	Status       string       `json:"status"`
	TaskLocality string       `json:"taskLocality"`
	Speculative  bool         `json:"speculative"`
	ErrorMessage string       `json:"errorMessage,omitempty"`
	TaskMetrics  *TaskMetrics `json:"taskMetrics,omitempty"`
}

// TaskMetrics is Spark's TaskMetrics (the fields Flint has). Times are in
// milliseconds, sizes in bytes.
type TaskMetrics struct {
	ExecutorDeserializeTime int64               `json:"executorDeserializeTime"`
	ExecutorRunTime         int64               `json:"executorRunTime"`
	ResultSize              int64               `json:"resultSize"`
	ResultSerializationTime int64               `json:"resultSerializationTime"`
	InputMetrics            InputMetrics        `json:"inputMetrics"`
	ShuffleReadMetrics      ShuffleReadMetrics  `json:"shuffleReadMetrics"`
	ShuffleWriteMetrics     ShuffleWriteMetrics `json:"shuffleWriteMetrics"`
	// DiskBytesSpilled are the bytes the task's shuffle writer spilled.
	DiskBytesSpilled int64 `json:"diskBytesSpilled"`
}

// InputMetrics is Spark's InputMetrics: what the task read from its data
// source.
type InputMetrics struct {
	BytesRead   int64 `json:"bytesRead"`
	RecordsRead int64 `json:"recordsRead"`
}

// ShuffleReadMetrics is Spark's ShuffleReadMetrics (no records count).
// FetchWaitTime is in milliseconds.
type ShuffleReadMetrics struct {
	RemoteBlocksFetched int64 `json:"remoteBlocksFetched"`
	LocalBlocksFetched  int64 `json:"localBlocksFetched"`
	FetchWaitTime       int64 `json:"fetchWaitTime"`
	RemoteBytesRead     int64 `json:"remoteBytesRead"`
	LocalBytesRead      int64 `json:"localBytesRead"`
}

// ShuffleWriteMetrics is Spark's ShuffleWriteMetrics; WriteTime is in
// nanoseconds, as in Spark.
type ShuffleWriteMetrics struct {
	BytesWritten   int64 `json:"bytesWritten"`
	WriteTime      int64 `json:"writeTime"`
	RecordsWritten int64 `json:"recordsWritten"`
}

// ExecutorSummary is Spark's ExecutorSummary (the fields Flint has).
type ExecutorSummary struct {
	ID                string            `json:"id"`
	HostPort          string            `json:"hostPort"`
	IsActive          bool              `json:"isActive"`
	TotalCores        int               `json:"totalCores"`
	MaxTasks          int               `json:"maxTasks"`
	ActiveTasks       int               `json:"activeTasks"`
	FailedTasks       int               `json:"failedTasks"`
	CompletedTasks    int               `json:"completedTasks"`
	TotalTasks        int               `json:"totalTasks"`
	TotalDuration     int64             `json:"totalDuration"`
	TotalInputBytes   int64             `json:"totalInputBytes"`
	TotalShuffleRead  int64             `json:"totalShuffleRead"`
	TotalShuffleWrite int64             `json:"totalShuffleWrite"`
	AddTime           Date              `json:"addTime"`
	RemoveTime        *Date             `json:"removeTime,omitempty"`
	RemoveReason      string            `json:"removeReason,omitempty"`
	ExecutorLogs      map[string]string `json:"executorLogs"`
}

// ApplicationEnvironmentInfo is Spark's ApplicationEnvironmentInfo: Flint's
// properties under sparkProperties, the Go runtime under runtime.
type ApplicationEnvironmentInfo struct {
	Runtime          map[string]string `json:"runtime"`
	SparkProperties  [][2]string       `json:"sparkProperties"`
	SystemProperties [][2]string       `json:"systemProperties"`
	ClasspathEntries [][2]string       `json:"classpathEntries"`
}
