package driver

import (
	"github.com/flint-mesos/flint/framework/dagscheduler"
)

// stageAttempt is the attempt of the stage a job state's task set runs (0
// for a job of one stage), as listener events carry it.
func (js *jobState) stageAttempt() int {
	if js.dagSet != nil {
		return js.dagSet.Attempt
	}
	return 0
}

// stageParents returns the stages ts reads from: the map stages writing
// the shuffles it reads, as the UI draws the DAG. It records ts as the
// writer of its shuffle when it is a map stage.
func (c *driverCore) stageParents(ts *dagscheduler.TaskSet) []int {
	if c.shuffleStages == nil {
		c.shuffleStages = map[int]int{}
	}
	if ts.Kind == dagscheduler.MapTask {
		c.shuffleStages[ts.ShuffleID] = ts.StageID
	}
	var out []int
	for _, sid := range ts.Reads {
		if p, ok := c.shuffleStages[sid]; ok {
			out = append(out, p)
		}
	}
	return out
}
