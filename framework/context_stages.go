package framework

import (
	"fmt"

	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/internal/driverseam"
)

// StageState is where a stage is (StageExplanation.State).
type StageState int

// Stage states.
const (
	StageUnknown   StageState = iota // no such stage (never existed, or its jobs ended)
	StageWaiting                     // waiting for parent stages' outputs
	StageRunning                     // an attempt's tasks are scheduled
	StageFailed                      // an attempt failed; resubmission is scheduled
	StageAvailable                   // map stage: every output is registered
	StageIdle                        // not running and not complete (its outputs were lost; it runs again when a child needs it)
)

var stageStateNames = [...]string{"UNKNOWN", "WAITING", "RUNNING", "FAILED", "AVAILABLE", "IDLE"}

func (s StageState) String() string {
	if s >= 0 && int(s) < len(stageStateNames) {
		return stageStateNames[s]
	}
	return fmt.Sprintf("StageState(%d)", int(s))
}

// StageKind says what a stage's tasks produce (StageExplanation.Kind).
type StageKind int

// Stage kinds (Spark's ShuffleMapStage and ResultStage).
const (
	MapStage    StageKind = iota // its tasks write shuffle outputs for later stages
	ResultStage                  // its tasks return values to the driver
)

func (k StageKind) String() string {
	switch k {
	case MapStage:
		return "map"
	case ResultStage:
		return "result"
	}
	return fmt.Sprintf("StageKind(%d)", int(k))
}

// StageExplanation says where a stage is and what it waits for.
type StageExplanation struct {
	StageID   int
	Kind      StageKind
	Name      string
	State     StageState
	Attempt   int     // latest attempt, -1 before the first
	Jobs      []int64 // active jobs needing it
	WaitingOn []int   // parent stages whose outputs are missing
	// Missing partitions (map outputs not registered, results not
	// returned), ascending, and why each is missing.
	Missing        []int
	MissingReasons []string
	Running        []int // partitions of the running attempt not done yet
	FailedAttempts int   // consecutive failed attempts
	Detail         string
}

// ExplainStage says where a stage is in the DAG core: which parent stages
// it waits on, which partitions are missing and why (never computed, being
// computed, or lost with an executor or a fetch failure), and its failed
// attempts. Explain says why one task of an active stage is not running.
func (c *Context) ExplainStage(stageID int) StageExplanation {
	return stageExplanation(c.driver.ExplainStage(stageID))
}

// stageExplanation is the user's form of the DAG core's explanation.
func stageExplanation(e dagscheduler.StageExplanation) StageExplanation {
	return StageExplanation{StageID: e.StageID, Kind: stageKinds[e.Kind], Name: e.Name, State: stageStates[e.State],
		Attempt: e.Attempt, Jobs: e.Jobs, WaitingOn: e.WaitingOn, Missing: e.Missing, MissingReasons: e.MissingReasons,
		Running: e.Running, FailedAttempts: e.FailedAttempts, Detail: e.Detail}
}

var stageStates = map[dagscheduler.StageState]StageState{
	dagscheduler.StageUnknown: StageUnknown, dagscheduler.StageWaiting: StageWaiting,
	dagscheduler.StageRunning: StageRunning, dagscheduler.StageFailed: StageFailed,
	dagscheduler.StageAvailable: StageAvailable, dagscheduler.StageIdle: StageIdle,
}

var stageKinds = map[dagscheduler.TaskKind]StageKind{dagscheduler.MapTask: MapStage, dagscheduler.ResultTask: ResultStage}

// The dataset layer's plumbing (jobs of stages, shuffle ids and releases,
// cached-partition locations, the UI store) is not the user's API: it is
// reached through internal/driverseam.
func init() {
	driverseam.Register(func(fc any) (driverseam.Seam, bool) {
		c, ok := fc.(*Context)
		if !ok || c == nil {
			return driverseam.Seam{}, false
		}
		return driverseam.Seam{Driver: c.driver, UIStore: c.op.store, Env: c.env, Writes: &c.writes}, true
	})
}
