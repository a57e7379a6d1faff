package dataset

import (
	"context"
	"testing"
)

// Stopping a Context releases what its runtime environment held in this
// process (local mode: its executor's): the broadcast copies its tasks
// loaded and the graphs they rebuilt.
func TestStopReleasesTheContextsState(t *testing.T) {
	fc := driverContext(t)
	st := driverState(fc)
	if _, err := keptBroadcast.Run(context.Background(), fc, t.Name()); err != nil {
		t.Fatal(err)
	}
	name := keptNames[t.Name()]
	st.rebuilt.Lock()
	graphs := len(st.rebuilt.m)
	st.rebuilt.Unlock()
	if !st.loaded.holds(name) || graphs == 0 {
		t.Fatalf("before Stop the Context's executor holds broadcast %s: %v, %d rebuilt graphs; want it and at least one", name, st.loaded.holds(name), graphs)
	}
	if err := fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.rebuilt.Lock()
	graphs = len(st.rebuilt.m)
	st.rebuilt.Unlock()
	if st.loaded.holds(name) || graphs != 0 {
		t.Errorf("after Stop the Context's state holds broadcast %s: %v, %d rebuilt graphs; want neither", name, st.loaded.holds(name), graphs)
	}
}
