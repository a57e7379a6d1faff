package framework

import (
	"testing"
)

func TestDAGConfig(t *testing.T) {
	c := NewConfig()
	if d := dagConfig(c); d.MaxConsecutiveStageAttempts != 4 || d.DisableReduceLocality || d.UnregisterOutputOnHost {
		t.Fatalf("defaults: %+v", d)
	}
	for k, v := range map[string]string{"flint.stage.maxConsecutiveAttempts": "2",
		"flint.shuffle.reduceLocality.enabled": "false", "flint.files.fetchFailure.unRegisterOutputOnHost": "true"} {
		if err := c.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if d := dagConfig(c); d.MaxConsecutiveStageAttempts != 2 || !d.DisableReduceLocality || !d.UnregisterOutputOnHost {
		t.Fatalf("set: %+v", d)
	}
}
