package history

import (
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/eventlog"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func TestHistoryFollowsARunningAppAndListsNewestFirst(t *testing.T) {
	dir := t.TempDir()
	old, err := eventlog.Create(dir, "app-old", eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	old.OnEvent(event.ApplicationStart{Time: t0, AppID: "app-old", Name: "old"})
	old.OnEvent(event.ApplicationEnd{Time: t0.Add(time.Second)})
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	run, err := eventlog.Create(dir, "app-new", eventlog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	run.OnEvent(event.ApplicationStart{Time: t0.Add(time.Hour), AppID: "app-new", Name: "new"})
	run.OnEvent(event.JobStart{Time: t0.Add(time.Hour), JobID: 0, Name: "j", StageIDs: []int{0}, NumTasks: 1})
	if err := run.Flush(); err != nil {
		t.Fatal(err)
	}
	h := New(dir)
	if ids := h.Apps(); len(ids) != 2 || ids[0] != "app-new" || ids[1] != "app-old" {
		t.Fatalf("apps = %v", ids)
	}
	st, ok := h.Store("app-new")
	if !ok || st.App().Completed || len(st.Jobs()) != 1 || st.Jobs()[0].Status != "RUNNING" || len(h.Warnings("app-new")) != 0 {
		t.Fatalf("running app: ok %v, %+v, warnings %v", ok, st.Jobs(), h.Warnings("app-new"))
	}
	run.OnEvent(event.JobEnd{Time: t0.Add(time.Hour + time.Second), JobID: 0})
	run.OnEvent(event.ApplicationEnd{Time: t0.Add(time.Hour + 2*time.Second)})
	if err := run.Flush(); err != nil {
		t.Fatal(err)
	}
	st, _ = h.Store("app-new")
	if !st.App().Completed || st.Jobs()[0].Status != "SUCCEEDED" {
		t.Fatalf("after more events: %+v %+v", st.App(), st.Jobs())
	}
	for _, bad := range []string{"", "..", "../app-old", "nope"} {
		if _, ok := h.Store(bad); ok {
			t.Errorf("Store(%q) found something", bad)
		}
	}
}

func TestHistoryWarnsOfADamagedLog(t *testing.T) {
	dir := t.TempDir()
	w, _ := eventlog.Create(dir, "app-1", eventlog.Options{})
	w.OnEvent(event.ApplicationStart{Time: t0, AppID: "app-1"})
	w.OnEvent(event.JobStart{Time: t0, JobID: 0, StageIDs: []int{0}})
	w.OnEvent(event.ApplicationEnd{Time: t0})
	_ = w.Close()
	files, _ := eventlog.Files(eventlog.AppDir(dir, "app-1"))
	b, _ := os.ReadFile(files[0].Path)
	lines := strings.SplitAfter(string(b), "\n")
	lines[1] = "{garbage\n"
	_ = os.WriteFile(files[0].Path, []byte(strings.Join(lines, "")), 0o640)
	h := New(dir)
	st, ok := h.Store("app-1")
	ws := h.Warnings("app-1")
	if !ok || len(st.Jobs()) != 0 || len(ws) != 2 || !strings.Contains(ws[0], "is damaged") || !strings.Contains(ws[1], "line 2 is damaged") {
		t.Fatalf("ok %v, jobs %v, warnings %q", ok, st.Jobs(), ws)
	}
}
