package dagscheduler

import (
	"fmt"
	"slices"
	"strings"
)

// StageState is a stage's state as reported by Explain.
type StageState int

// Stage states.
const (
	StageUnknown   StageState = iota // no such stage (never existed, or its jobs ended)
	StageWaiting                     // waiting for parent stages' outputs
	StageRunning                     // an attempt's task set is in the task core
	StageFailed                      // an attempt failed; resubmission is scheduled
	StageAvailable                   // map stage: every output is registered
	StageIdle                        // not running and not complete (its outputs were lost; it runs again when a child needs it)
)

var stageStateNames2 = [...]string{"UNKNOWN", "WAITING", "RUNNING", "FAILED", "AVAILABLE", "IDLE"}

func (s StageState) String() string {
	if s >= 0 && int(s) < len(stageStateNames2) {
		return stageStateNames2[s]
	}
	return fmt.Sprintf("StageState(%d)", int(s))
}

// StageExplanation says where a stage is and what it waits for.
type StageExplanation struct {
	StageID   int
	Kind      TaskKind
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

// Explain reports a stage's state. It does not change anything.
func (s *Scheduler) Explain(stageID int) StageExplanation {
	st := s.stages[stageID]
	if st == nil {
		return StageExplanation{StageID: stageID, State: StageUnknown, Attempt: -1,
			Detail: fmt.Sprintf("no active stage %d", stageID)}
	}
	e := StageExplanation{StageID: st.id, Kind: st.kind, Name: st.name(), Attempt: st.latest, FailedAttempts: len(st.failedAttempt)}
	for id := range st.jobs {
		e.Jobs = append(e.Jobs, id)
	}
	slices.Sort(e.Jobs)
	for _, p := range s.missingParents(st) {
		e.WaitingOn = append(e.WaitingOn, p.id)
	}
	e.Missing, _ = s.missingPartitions(st)
	for _, p := range e.Missing {
		e.MissingReasons = append(e.MissingReasons, s.missingReason(st, p))
	}
	if st.state == stRunning {
		e.Running = st.pending.list()
	}
	switch st.state {
	case stWaiting:
		e.State = StageWaiting
	case stRunning:
		e.State = StageRunning
	case stFailed:
		e.State = StageFailed
	default:
		e.State = StageIdle
		if st.kind == MapTask && len(e.Missing) == 0 {
			e.State = StageAvailable
		}
	}
	e.Detail = e.detail()
	return e
}

func (s *Scheduler) missingReason(st *stage, p int) string {
	if st.kind == MapTask {
		if r, ok := st.lost[p]; ok {
			return "lost: " + r
		}
	}
	if st.state == stRunning && st.pending.has(p) {
		return fmt.Sprintf("computing in attempt %d", st.latest)
	}
	return "not computed yet"
}

func (e *StageExplanation) detail() string {
	var b strings.Builder
	fmt.Fprintf(&b, "stage %d (%s) is %v", e.StageID, e.Name, e.State)
	if e.Attempt >= 0 {
		fmt.Fprintf(&b, " at attempt %d", e.Attempt)
	}
	if len(e.WaitingOn) > 0 {
		fmt.Fprintf(&b, "; waits on stage %s", joinInts(e.WaitingOn))
	}
	if e.FailedAttempts > 0 {
		fmt.Fprintf(&b, "; %d consecutive failed attempts", e.FailedAttempts)
	}
	if len(e.Missing) > 0 {
		fmt.Fprintf(&b, "; %d partitions missing:", len(e.Missing))
		const show = 5
		for i, p := range e.Missing {
			if i == show {
				fmt.Fprintf(&b, " and %d more", len(e.Missing)-show)
				break
			}
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(&b, "%s p%d %s", sep, p, e.MissingReasons[i])
		}
	}
	return b.String()
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// StageProgress is one active stage for a progress bar.
type StageProgress struct {
	StageID, Attempt int
	Name             string
	State            StageState
	NumTasks         int // tasks of the stage (all partitions)
	Done             int // partitions computed
}

// Progress lists the stages of active jobs that are running, by id.
func (s *Scheduler) Progress() []StageProgress {
	var out []StageProgress
	for _, st := range s.sortedStages(func(st *stage) bool { return st.state == stRunning }) {
		p := StageProgress{StageID: st.id, Attempt: st.latest, Name: st.name(), State: StageRunning}
		if st.kind == MapTask {
			p.NumTasks, p.Done = st.node.Partitions, s.tracker.NumAvailable(st.shuffleID)
		} else {
			p.NumTasks, p.Done = len(st.job.partitions), st.job.nFinished
		}
		out = append(out, p)
	}
	return out
}
