package dagscheduler

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the test process has used, every thread
// (the garbage collector's too). On a machine shared with other work,
// wall-clock rates mostly measure the run queue; CPU time measures the
// code.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
