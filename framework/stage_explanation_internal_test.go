package framework

import (
	"testing"

	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/framework/scheduler"
)

// Every state and kind of the DAG core has the user's counterpart of the
// same name.
func TestStageExplanationNamesEveryCoreStateAndKind(t *testing.T) {
	for s := dagscheduler.StageUnknown; s <= dagscheduler.StageIdle; s++ {
		got, ok := stageStates[s]
		if !ok || got.String() != s.String() {
			t.Errorf("core state %s: user's state %s (mapped: %t)", s, got, ok)
		}
	}
	for k := dagscheduler.MapTask; k <= dagscheduler.ResultTask; k++ {
		got, ok := stageKinds[k]
		if !ok || got.String() != k.String() {
			t.Errorf("core kind %s: user's kind %s (mapped: %t)", k, got, ok)
		}
	}
}

// Every reason of the scheduling core has the user's reason of the same
// name, so Explain never reports a core reason as UNKNOWN.
func TestExplanationNamesEveryCoreReason(t *testing.T) {
	for r := scheduler.ReasonUnknown; r <= scheduler.ReasonPending; r++ {
		got, ok := taskReasons[r]
		if !ok || got.String() != r.String() {
			t.Errorf("core reason %s: user's reason %s (mapped: %t)", r, got, ok)
		}
	}
}
