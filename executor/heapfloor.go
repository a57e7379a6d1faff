package executor

import (
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/internal/gcfloor"
)

// HoldHeapFloor is an executor process's first step (both Mesos flavours' Main): it holds
// the heap floor its backend gave it (gcfloor.EnvFloor, gcfloor.ForMemory of
// flint.executor.memory) until release is called, so that a task reading data does not pay
// a collection every few MiB of input (docs/benchmarks.md, issue 25). Nothing is held when
// the environment sets GOGC (the user chose the pacing) or names no floor.
func HoldHeapFloor(log logrus.FieldLogger) (release func(), err error) {
	release, floor, err := gcfloor.HoldFromEnv()
	if err != nil {
		return nil, err
	}
	if floor > 0 {
		log.WithField("floor_mib", floor>>20).Debug("executor: holding a heap floor for the collector")
	}
	return release, nil
}
