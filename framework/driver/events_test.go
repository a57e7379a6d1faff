package driver

import (
	"testing"
	"time"
)

func TestExclusionScope(t *testing.T) {
	if got := exclusionScope(time.Time{}, "stage-3.0"); got != "from task set stage-3.0" {
		t.Errorf("task-set exclusion: %q", got)
	}
	until := time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)
	if got := exclusionScope(until, ""); got != "until 2026-11-30T07:00:00Z" {
		t.Errorf("application exclusion: %q", got)
	}
}
