package browsertest

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/uistore"
	"github.com/flint-mesos/flint/framework/webui"
)

// diamond is a finished application whose job joins two shuffled inputs:
// stages 0 and 1 feed stage 2, which feeds the result stage 3 — the events
// the DAG core posts for a multi-stage job.
func diamond() *uistore.Store {
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	s := uistore.New(uistore.Limits{})
	evs := []event.Event{
		event.ApplicationStart{Time: at(0), AppID: "app-dag", Name: "join", User: "ann", Version: "v1"},
		event.ExecutorAdded{Time: at(1), ExecutorID: "1", Host: "agent-a", Cores: 4},
		event.JobStart{Time: at(10), JobID: 0, Name: "join", StageIDs: []int{0, 1, 2, 3}, NumTasks: 10, Stages: []event.StageInfo{
			{StageID: 0, Name: "textFile users", NumTasks: 3}, {StageID: 1, Name: "textFile orders", NumTasks: 3},
			{StageID: 2, Name: "join", NumTasks: 2, ParentIDs: []int{0, 1}}, {StageID: 3, Name: "collect", NumTasks: 2, ParentIDs: []int{2}}}},
	}
	task := uint64(0)
	for _, st := range []struct{ id, n int }{{0, 3}, {1, 3}, {2, 2}, {3, 2}} {
		evs = append(evs, event.StageSubmitted{Time: at(20 * st.id), JobID: 0, StageID: st.id, Name: fmt.Sprint("stage ", st.id), NumTasks: st.n})
		for i := 0; i < st.n; i++ {
			evs = append(evs,
				event.TaskStart{Time: at(20*st.id + 1), StageID: st.id, TaskID: task, Index: i, ExecutorID: "1", Host: "agent-a", Locality: "NODE_LOCAL"},
				event.TaskEnd{Time: at(20*st.id + 9), StageID: st.id, TaskID: task, Index: i, ExecutorID: "1", State: "FINISHED",
					RunTime: 8 * time.Millisecond, ResultSize: 64, ShuffleWriteBytes: 4096, ShuffleReadBytes: int64(1024 * st.id)})
			task++
		}
		evs = append(evs, event.StageCompleted{Time: at(20*st.id + 10), JobID: 0, StageID: st.id})
	}
	evs = append(evs, event.JobEnd{Time: at(100), JobID: 0}, event.ApplicationEnd{Time: at(101)})
	for _, e := range evs {
		s.OnEvent(e)
	}
	return s
}

func TestBrowserDrawsAMultiStageDAG(t *testing.T) {
	srv := httptest.NewServer(webui.Handler(webui.Single{S: diamond()}, webui.Options{}))
	defer srv.Close()
	ctx := browser(t)
	navigate(ctx, t, srv.URL+"/jobs/job/?id=0")
	if n := count(ctx, t, "svg.dag g.stage-node"); n != 4 {
		t.Fatalf("%d stages in the DAG, want 4", n)
	}
	for _, e := range [][2]int{{0, 2}, {1, 2}, {2, 3}} {
		if n := count(ctx, t, fmt.Sprintf(`svg.dag line[data-from="%d"][data-to="%d"]`, e[0], e[1])); n != 1 {
			t.Errorf("edge %d→%d drawn %d times", e[0], e[1], n)
		}
	}
	if n := count(ctx, t, "svg.dag line"); n != 3 {
		t.Errorf("%d edges, want 3", n)
	}
	// Parents are drawn left of their children.
	x := func(stage int) float64 {
		return eval[float64](ctx, t, fmt.Sprintf(`document.querySelector('g[data-stage="%d"] rect').getBoundingClientRect().x`, stage))
	}
	if !(x(0) < x(2) && x(1) < x(2) && x(2) < x(3)) || x(0) != x(1) {
		t.Errorf("stage x positions 0:%v 1:%v 2:%v 3:%v", x(0), x(1), x(2), x(3))
	}
	if n := count(ctx, t, `meta[http-equiv="refresh"]`); n != 0 {
		t.Error("a completed application's page refreshes itself")
	}
	if got := text(ctx, t, `#stages tr[data-stage="3"] td.status`); got != "COMPLETE" {
		t.Errorf("stage 3 status %q", got)
	}
	shoot(ctx, t, "ui-dag.png")
	// A stage's page highlights it in its job's DAG.
	navigate(ctx, t, srv.URL+"/stages/stage/?id=2&attempt=0")
	if got := eval[string](ctx, t, `document.querySelector('svg.dag g.current').dataset.stage`); got != "2" {
		t.Errorf("highlighted stage %q, want 2", got)
	}
}
