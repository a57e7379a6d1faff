package driver

import "time"

// Retained is what the driver core keeps, at one moment, per attempt,
// task set, job and stage: what a simulation bounds after every step
// (ended attempts and jobs must not be kept).
type Retained struct {
	Attempts          int // launched attempts not seen ending (the driver core's record)
	TaskCoreAttempts  int // the same, as the task core (framework/scheduler) counts them
	SlotUses          int // attempts holding cores on an executor
	TaskSets          int // stage attempts' task sets in flight
	Jobs              int // jobs in flight
	Stages            int // stage statuses kept, active or ended and not yet reported
	EndedStages       int // of which ended (at most 1,000: the oldest are forgotten)
	AttemptsToWaitFor int // AfterAttemptsEnd callbacks waiting
}

// InspectRetained calls fn with what the core retains, on the loop (or
// directly when the loop is not started), as InspectMapOutputs does.
func (d *Driver) InspectRetained(fn func(Retained)) {
	d.query(func(c *driverCore, _ time.Time) { fn(c.retained()) })
}

func (c *driverCore) retained() Retained {
	return Retained{
		Attempts: len(c.running), TaskCoreAttempts: c.sched.RunningTasks(), SlotUses: len(c.taken),
		TaskSets: len(c.jobs), Jobs: len(c.runs), Stages: len(c.stages), EndedStages: len(c.ended),
		AttemptsToWaitFor: len(c.afters),
	}
}
