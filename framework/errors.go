package framework

import (
	"errors"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/driver"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrJobAborted is wrapped by every *JobError.
	ErrJobAborted = driver.ErrJobAborted
	// ErrStopped is returned by RunJob after Stop.
	ErrStopped = driver.ErrStopped
	// ErrNoBackend means no backend is registered for a master kind.
	ErrNoBackend = backend.ErrNoBackend
	// ErrBadMaster is wrapped by every error about an invalid master string.
	ErrBadMaster = backend.ErrBadMaster
	// ErrInvalidJob is wrapped by job validation errors.
	ErrInvalidJob = driver.ErrInvalidJob
	// ErrBackendAborted is the cause of jobs a backend gave up on (Driver.Abort).
	ErrBackendAborted = driver.ErrBackendAborted
	// ErrTaskTooLarge is wrapped (with ErrInvalidJob) when a task's input
	// is larger than the backend can deliver to an executor.
	ErrTaskTooLarge = errors.New("framework: task input too large")
)

// JobError is returned by RunJob when a job does not complete: a task failed
// too often, a deterministic failure (unknown function, undecodable input,
// result too large), cancellation, or the backend stopped.
type JobError = driver.JobError
