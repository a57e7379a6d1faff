package executor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/flint-mesos/flint/proto/flintpb"
)

// diskFullFailure is the DISK_FULL failure of a task when err says a
// file system of this executor is full (ENOSPC) or over its quota
// (EDQUOT), else nil. Its message names the file once — the errors that
// reach here repeat it (a shuffle spill's directory, then the spill
// file's write) — with the system's cause and what to do; the driver's
// scheduler adds the executor and its host, retries the task on other
// executors only and fails the job at once when none is left.
func diskFullFailure(err error) *flintpb.TaskFailure {
	var what string
	switch {
	case errors.Is(err, syscall.ENOSPC):
		what = "the file system is full"
	case errors.Is(err, syscall.EDQUOT):
		what = "the disk quota is used up"
	default:
		return nil
	}
	var pe *fs.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = fmt.Errorf("%s %s: %w", pe.Op, pe.Path, pe.Err)
	case errors.As(err, &le):
		err = fmt.Errorf("%s %s: %w", le.Op, le.New, le.Err)
	}
	return &flintpb.TaskFailure{Kind: flintpb.FailureKind_DISK_FULL, Message: fmt.Sprintf(
		"%s: %v (free space there, or set flint.local.dir to a larger disk for shuffle and cache files)", what, err)}
}
