package framework

import (
	"testing"

	"github.com/flint-mesos/flint/framework/dagscheduler"
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
