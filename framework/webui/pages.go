package webui

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/flint-mesos/flint/framework/uistore"
)

// maxPendingShown bounds the pending tasks a stage page explains.
const maxPendingShown = 50

// page is what the layout renders.
type page struct {
	Title, Brand, AppName, AppID, Page, Base string
	Live, History                            bool
	RefreshSeconds                           int
	Style                                    template.CSS
	Now                                      time.Time
	Warnings                                 []string
	Data                                     any
}

func (s *server) routePages(mux *http.ServeMux) {
	for _, base := range []string{"", "/history/{app}"} {
		mux.HandleFunc("GET "+base+"/jobs/{$}", s.withApp(s.jobsPage))
		mux.HandleFunc("GET "+base+"/jobs/job/{$}", s.withApp(s.jobPage))
		mux.HandleFunc("GET "+base+"/stages/{$}", s.withApp(s.stagesPage))
		mux.HandleFunc("GET "+base+"/stages/stage/{$}", s.withApp(s.stagePage))
		mux.HandleFunc("GET "+base+"/executors/{$}", s.withApp(s.executorsPage))
		mux.HandleFunc("GET "+base+"/executors/logs/{$}", s.withApp(s.logsPage))
		mux.HandleFunc("GET "+base+"/environment/{$}", s.withApp(s.environmentPage))
	}
	mux.HandleFunc("GET /history/{app}/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/history/"+r.PathValue("app")+"/jobs/", http.StatusFound)
	})
	mux.HandleFunc("GET /{$}", s.rootPage)
}

// appHandler serves one application's page: st is its store, base the
// prefix of its pages' links.
type appHandler func(w http.ResponseWriter, r *http.Request, st *uistore.Store, p *page)

// withApp finds the application (the path's, or the only one) and fills
// in the layout's fields.
func (s *server) withApp(h appHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, base := r.PathValue("app"), "/"
		if id != "" {
			base = "/history/" + id + "/"
		} else if ids := s.src.Apps(); len(ids) > 0 && !s.o.History {
			id = ids[0]
		}
		st, ok := s.src.Store(id)
		if !ok {
			http.Error(w, fmt.Sprintf("webui: unknown application %q", id), http.StatusNotFound)
			return
		}
		a := st.App()
		p := &page{Title: s.o.Title, Brand: s.o.Title, AppName: a.Name, AppID: a.ID, Base: base, History: s.o.History,
			Live: !a.Completed, RefreshSeconds: max(1, int(s.o.Refresh.Seconds())), Style: template.CSS(styleCSS), Now: s.o.Now()}
		if w, ok := s.src.(Warner); ok {
			p.Warnings = w.Warnings(id)
		}
		h(w, r, st, p)
	}
}

// Warner is implemented by sources that know of problems with an
// application's data (a truncated event log): pages show them on top.
type Warner interface {
	Warnings(appID string) []string
}

func (s *server) render(w http.ResponseWriter, name string, p *page) {
	p.Page = name
	var buf bytes.Buffer
	if err := templates[name].Execute(&buf, p); err != nil {
		http.Error(w, "webui: render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:")
	_, _ = w.Write(buf.Bytes())
}

// appRow is one line of the history server's application list.
type appRow struct {
	uistore.App
	Duration time.Duration
}

func (s *server) rootPage(w http.ResponseWriter, r *http.Request) {
	if !s.o.History {
		http.Redirect(w, r, "/jobs/", http.StatusFound)
		return
	}
	var rows []appRow
	now := s.o.Now()
	for _, id := range s.src.Apps() {
		if st, ok := s.src.Store(id); ok {
			a := st.App()
			end := a.End
			if !a.Completed {
				end = a.LastEvent
			}
			rows = append(rows, appRow{App: a, Duration: end.Sub(a.Start)})
		}
	}
	s.render(w, "apps", &page{Title: s.o.Title, Brand: s.o.Title, AppName: "applications", History: true,
		Style: template.CSS(styleCSS), Now: now, Data: rows})
}

func (s *server) jobsPage(w http.ResponseWriter, r *http.Request, st *uistore.Store, p *page) {
	p.Data = struct {
		App  uistore.App
		Jobs []uistore.JobData
	}{st.App(), st.Jobs()}
	s.render(w, "jobs", p)
}

func (s *server) jobPage(w http.ResponseWriter, r *http.Request, st *uistore.Store, p *page) {
	id, err := strconv.ParseInt(r.URL.Query().Get("id"), 10, 64)
	if err != nil {
		http.Error(w, "webui: job page needs ?id=<job id>", http.StatusBadRequest)
		return
	}
	j, err := st.Job(id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	stages := jobStages(st, j)
	p.Data = struct {
		Job    uistore.JobData
		Stages []uistore.StageData
		DAG    dag
	}{j, stages, layoutDAG(stages, -1, p.Base)}
	s.render(w, "job", p)
}

// jobStages returns the latest attempt of each of a job's stages, by id.
func jobStages(st *uistore.Store, j uistore.JobData) []uistore.StageData {
	latest := map[int]uistore.StageData{}
	for _, sd := range st.Stages() {
		if sd.JobID != j.JobID {
			continue
		}
		if cur, ok := latest[sd.StageID]; !ok || sd.AttemptID > cur.AttemptID {
			latest[sd.StageID] = sd
		}
	}
	out := make([]uistore.StageData, 0, len(latest))
	for _, sd := range latest {
		out = append(out, sd)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].StageID < out[b].StageID })
	return out
}

func (s *server) stagesPage(w http.ResponseWriter, r *http.Request, st *uistore.Store, p *page) {
	p.Data = struct{ Stages []uistore.StageData }{st.Stages()}
	s.render(w, "stages", p)
}

// pendingRow is a pending task and why it is not placed.
type pendingRow struct {
	Index          int
	Reason, Detail string
}

func (s *server) stagePage(w http.ResponseWriter, r *http.Request, st *uistore.Store, p *page) {
	q := r.URL.Query()
	id, err1 := strconv.Atoi(q.Get("id"))
	attempt, err2 := strconv.Atoi(q.Get("attempt"))
	if err1 != nil || err2 != nil {
		http.Error(w, "webui: stage page needs ?id=<stage id>&attempt=<attempt>", http.StatusBadRequest)
		return
	}
	k := uistore.StageKey{ID: id, Attempt: attempt}
	sd, err := st.Stage(k, false, p.Now)
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	tasks, _ := st.Tasks(k, uistore.TaskQuery{Length: -1}, p.Now)
	var pending []pendingRow
	more, pendingSummary := 0, ""
	if s.o.Explain != nil && p.Live {
		pending, more, pendingSummary = s.explainPending(st, k)
	}
	var stages []uistore.StageData
	if j, err := st.Job(sd.JobID); err == nil {
		stages = jobStages(st, j)
	}
	var summary []summaryRow
	if d, ok, _ := st.TaskSummary(k, nil); ok {
		summary = summaryRows(d)
	}
	p.Data = struct {
		Stage          uistore.StageData
		Tasks          []uistore.TaskData
		Pending        []pendingRow
		PendingMore    int
		PendingSummary string
		DAG            dag
		Summary        []summaryRow
		Succeeded      int
	}{sd, tasks, pending, more, pendingSummary, layoutDAG(stages, id, p.Base), summary, sd.NumCompleteTasks}
	s.render(w, "stage", p)
}

// explainPending says why a live stage's pending tasks (the first
// maxPendingShown) are not placed: one line when they all wait for the
// same reason (every slot busy is the usual one: nothing is wrong), else a
// row per task.
func (s *server) explainPending(st *uistore.Store, k uistore.StageKey) (rows []pendingRow, more int, summary string) {
	idx := st.PendingIndices(k)
	waiting := len(idx)
	if len(idx) > maxPendingShown {
		idx, more = idx[:maxPendingShown], len(idx)-maxPendingShown
	}
	same, slots := true, 0
	for _, i := range idx {
		row := pendingRow{Index: i}
		if e, err := s.o.Explain(k.ID, i); err != nil {
			row.Reason, row.Detail = "UNKNOWN", err.Error()
		} else {
			row.Reason, row.Detail, slots = e.Reason, e.Detail, e.Slots
		}
		same = same && (len(rows) == 0 || rows[0].Reason == row.Reason && rows[0].Detail == row.Detail)
		rows = append(rows, row)
	}
	switch {
	case len(rows) == 0 || !same:
		return rows, more, ""
	case rows[0].Reason == ReasonSlotsBusy:
		return nil, 0, fmt.Sprintf("every slot busy, %s waiting, %s", plural(waiting, "task"), plural(slots, "slot"))
	}
	return nil, 0, fmt.Sprintf("%s waiting, all for one reason: %s: %s", plural(waiting, "task"), rows[0].Reason, rows[0].Detail)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func (s *server) executorsPage(w http.ResponseWriter, r *http.Request, st *uistore.Store, p *page) {
	p.Data = struct {
		Executors []uistore.ExecutorSummary
		Logs      bool
	}{st.Executors(false), s.o.Sandbox != nil}
	s.render(w, "executors", p)
}

func (s *server) environmentPage(w http.ResponseWriter, r *http.Request, st *uistore.Store, p *page) {
	p.Data = st.Environment()
	s.render(w, "environment", p)
}

// summaryRow is one metric of the stage page's summary table, at the
// default quantiles (min, 25th, median, 75th, max), formatted.
type summaryRow struct {
	Metric string
	Values []string
}

func summaryRows(d uistore.TaskMetricDistributions) []summaryRow {
	millis := func(vs []float64) []string {
		out := make([]string, len(vs))
		for i, v := range vs {
			out[i] = fmtDur(time.Duration(v) * time.Millisecond)
		}
		return out
	}
	bytes := func(vs []float64) []string {
		out := make([]string, len(vs))
		for i, v := range vs {
			out[i] = fmtBytes(int64(v))
		}
		return out
	}
	return []summaryRow{
		{"Duration", millis(d.Duration)},
		{"Run time", millis(d.ExecutorRunTime)},
		{"Input decode time", millis(d.ExecutorDeserializeTime)},
		{"Result encode time", millis(d.ResultSerializationTime)},
		{"Result size", bytes(d.ResultSize)},
		{"Input size", bytes(d.InputMetrics.BytesRead)},
		{"Shuffle read", bytes(d.ShuffleReadMetrics.ReadBytes)},
		{"Shuffle write", bytes(d.ShuffleWriteMetrics.WriteBytes)},
	}
}
