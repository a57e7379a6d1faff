package gcfloor

import (
	"fmt"
	"os"
	"strconv"

	"github.com/flint-mesos/flint/contract"
)

// ForMemory is the floor a process running Flint's tasks holds for an executor of
// executorMemory bytes (flint.executor.memory): 1/share of it, at most maxFloor. It is the
// one policy of every mode — the local backend holds it in the driver's process, the Mesos
// backends hand it to their executors in EnvFloor. 1/16 is 64 MiB at the 1g default; past a
// heap goal of about 20 MB a text scan measured no less CPU (docs/benchmarks.md, issue 25),
// so a larger executor gets no more than maxFloor (a larger floor only costs resident memory,
// and page faults while the heap first grows to it).
func ForMemory(executorMemory int64) int64 { return max(0, min(executorMemory/share, maxFloor)) }

const (
	share    = 16
	maxFloor = 256 << 20
)

// EnvFloor is the environment variable in which a Mesos backend gives an executor its floor
// in bytes (ForMemory of flint.executor.memory): the driver–executor contract's
// EnvGCFloor. The backend leaves it out when the user chose the executors' pacing
// (flint.executorEnv.GOGC); Hold would ignore it then anyway.
const EnvFloor = contract.EnvGCFloor

// HoldFromEnv holds the floor EnvFloor names, if any, until release is called: an executor
// process's first step. floor is the floor held (0 when none: EnvFloor unset or 0, or GOGC
// set in the environment, which Hold leaves alone). A malformed value is an error, and
// nothing is held.
func HoldFromEnv() (release func(), floor int64, err error) {
	v, ok := os.LookupEnv(EnvFloor)
	if !ok || v == "" {
		return func() {}, 0, nil
	}
	floor, err = strconv.ParseInt(v, 10, 64)
	if err != nil {
		return func() {}, 0, fmt.Errorf("gcfloor: %s: %w", EnvFloor, err)
	}
	if floor < 0 {
		return func() {}, 0, fmt.Errorf("gcfloor: %s=%d is negative", EnvFloor, floor)
	}
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}, 0, nil
	}
	return Hold(floor), floor, nil
}
