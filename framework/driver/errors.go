package driver

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors (framework re-exports them). Match them with errors.Is.
var (
	// ErrJobAborted is wrapped by every *JobError.
	ErrJobAborted = errors.New("framework: job aborted")
	// ErrStopped is returned by RunJob after Stop.
	ErrStopped = errors.New("framework: context stopped")
	// ErrInvalidJob is wrapped by job validation errors.
	ErrInvalidJob = errors.New("framework: invalid job")
	// ErrBackendAborted is the cause of jobs a backend gave up on (Driver.Abort).
	ErrBackendAborted = errors.New("framework: backend aborted the job")
)

// JobError is returned by RunJob when a job does not complete: a task failed
// too often, a deterministic failure (unknown function, undecodable input,
// result too large), cancellation, or the backend stopped.
type JobError struct {
	JobID   int64
	Job     string
	StageID int
	// Reason is the scheduler's abort reason, naming the task and attempt.
	Reason string
	// TaskIndex and Attempt identify the last failed task (-1 when none).
	TaskIndex int
	Attempt   int
	// FailureKind, Message and Stack are the last task failure, if any.
	FailureKind string
	Message     string
	Stack       string
	// Cause is set for cancellation (context.Canceled, DeadlineExceeded) and stops.
	Cause error
}

func (e *JobError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "framework: job %d", e.JobID)
	if e.Job != "" {
		fmt.Fprintf(&b, " (%s)", e.Job)
	}
	fmt.Fprintf(&b, " aborted: %s", e.Reason)
	if e.Stack != "" {
		fmt.Fprintf(&b, "\ntask stack:\n%s", e.Stack)
	}
	return b.String()
}

// Unwrap lets errors.Is match ErrJobAborted and the cause.
func (e *JobError) Unwrap() []error {
	if e.Cause != nil {
		return []error{ErrJobAborted, e.Cause}
	}
	return []error{ErrJobAborted}
}
