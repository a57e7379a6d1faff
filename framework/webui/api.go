package webui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/flint-mesos/flint/framework/uistore"
)

// apiVersion is what /api/v1/version reports under Spark's field name.
type apiVersion struct {
	Spark string `json:"spark"`
}

func (s *server) routeAPI(mux *http.ServeMux) {
	const app = "GET /api/v1/applications/{app}"
	mux.HandleFunc("GET /api/v1/version", s.apiVersion)
	mux.HandleFunc("GET /api/v1/applications", s.apiApplications)
	mux.HandleFunc(app, s.withStore(s.apiApplication))
	mux.HandleFunc(app+"/jobs", s.withStore(s.apiJobs))
	mux.HandleFunc(app+"/jobs/{job}", s.withStore(s.apiJob))
	mux.HandleFunc(app+"/stages", s.withStore(s.apiStages))
	mux.HandleFunc(app+"/stages/{stage}", s.withStore(s.apiStage))
	mux.HandleFunc(app+"/stages/{stage}/{attempt}", s.withStore(s.apiStageAttempt))
	mux.HandleFunc(app+"/stages/{stage}/{attempt}/taskList", s.withStore(s.apiTaskList))
	mux.HandleFunc(app+"/stages/{stage}/{attempt}/taskSummary", s.withStore(s.apiTaskSummary))
	mux.HandleFunc(app+"/executors", s.withStore(s.apiExecutors(true)))
	mux.HandleFunc(app+"/allexecutors", s.withStore(s.apiExecutors(false)))
	mux.HandleFunc(app+"/environment", s.withStore(s.apiEnvironment))
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, fmt.Sprintf("webui: no such endpoint %s (docs/ui.md lists the REST API)", r.URL.Path), http.StatusNotFound)
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// apiError answers err with 404 for unknown things, 400 for bad queries.
func apiError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, uistore.ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, uistore.ErrBadQuery):
		code = http.StatusBadRequest
	}
	http.Error(w, err.Error(), code)
}

func (s *server) withStore(h func(http.ResponseWriter, *http.Request, *uistore.Store)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("app")
		st, ok := s.src.Store(id)
		if !ok {
			apiError(w, fmt.Errorf("%w: unknown app %q", uistore.ErrNotFound, id))
			return
		}
		h(w, r, st)
	}
}

func (s *server) apiVersion(w http.ResponseWriter, r *http.Request) {
	v := ""
	if ids := s.src.Apps(); len(ids) > 0 {
		if st, ok := s.src.Store(ids[0]); ok {
			v = st.App().Version
		}
	}
	writeJSON(w, apiVersion{Spark: v})
}

func (s *server) apiApplications(w http.ResponseWriter, r *http.Request) {
	status := strings.ToLower(r.URL.Query().Get("status"))
	if status != "" && status != "completed" && status != "running" {
		apiError(w, fmt.Errorf("%w: status %q: want completed or running", uistore.ErrBadQuery, status))
		return
	}
	out := []uistore.ApplicationInfo{}
	for _, id := range s.src.Apps() {
		st, ok := s.src.Store(id)
		if !ok {
			continue
		}
		a := st.Application(s.o.Now())
		if status != "" && a.Attempts[0].Completed != (status == "completed") {
			continue
		}
		out = append(out, a)
	}
	writeJSON(w, out)
}

func (s *server) apiApplication(w http.ResponseWriter, r *http.Request, st *uistore.Store) {
	writeJSON(w, st.Application(s.o.Now()))
}

// statuses parses ?status= (repeatable, case-insensitive) against allowed.
func statuses(r *http.Request, allowed ...string) ([]string, error) {
	var out []string
	for _, v := range r.URL.Query()["status"] {
		u := strings.ToUpper(v)
		ok := false
		for _, a := range allowed {
			ok = ok || a == u
		}
		if !ok {
			return nil, fmt.Errorf("%w: status %q: want one of %s", uistore.ErrBadQuery, v, strings.ToLower(strings.Join(allowed, ", ")))
		}
		out = append(out, u)
	}
	return out, nil
}

func (s *server) apiJobs(w http.ResponseWriter, r *http.Request, st *uistore.Store) {
	ss, err := statuses(r, uistore.JobRunning, uistore.JobSucceeded, uistore.JobFailed, uistore.JobUnknown)
	if err != nil {
		apiError(w, err)
		return
	}
	writeJSON(w, st.Jobs(ss...))
}

func pathInt(r *http.Request, name string) (int, error) {
	v := r.PathValue(name)
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: %s %q is not a number", uistore.ErrNotFound, name, v)
	}
	return n, nil
}

func (s *server) apiJob(w http.ResponseWriter, r *http.Request, st *uistore.Store) {
	id, err := pathInt(r, "job")
	if err == nil {
		var j uistore.JobData
		if j, err = st.Job(int64(id)); err == nil {
			writeJSON(w, j)
			return
		}
	}
	apiError(w, err)
}

func (s *server) apiStages(w http.ResponseWriter, r *http.Request, st *uistore.Store) {
	ss, err := statuses(r, uistore.StageActive, uistore.StageComplete, uistore.StageFailed, uistore.StagePending, uistore.StageSkipped)
	if err != nil {
		apiError(w, err)
		return
	}
	writeJSON(w, st.Stages(ss...))
}

func (s *server) apiStage(w http.ResponseWriter, r *http.Request, st *uistore.Store) {
	id, err := pathInt(r, "stage")
	if err == nil {
		var out []uistore.StageData
		if out, err = st.StageAttempts(id, s.o.Now()); err == nil {
			writeJSON(w, out)
			return
		}
	}
	apiError(w, err)
}

func stageKey(r *http.Request) (uistore.StageKey, error) {
	id, err := pathInt(r, "stage")
	if err != nil {
		return uistore.StageKey{}, err
	}
	a, err := pathInt(r, "attempt")
	return uistore.StageKey{ID: id, Attempt: a}, err
}

func (s *server) apiStageAttempt(w http.ResponseWriter, r *http.Request, st *uistore.Store) {
	k, err := stageKey(r)
	if err == nil {
		var sd uistore.StageData
		if sd, err = st.Stage(k, true, s.o.Now()); err == nil {
			writeJSON(w, sd)
			return
		}
	}
	apiError(w, err)
}

func queryInt(r *http.Request, name string, def int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%w: %s %q is not a number", uistore.ErrBadQuery, name, v)
	}
	return n, nil
}

func (s *server) apiTaskList(w http.ResponseWriter, r *http.Request, st *uistore.Store) {
	k, err := stageKey(r)
	if err != nil {
		apiError(w, err)
		return
	}
	q := uistore.TaskQuery{SortBy: r.URL.Query().Get("sortBy")}
	if q.Offset, err = queryInt(r, "offset", 0); err == nil {
		q.Length, err = queryInt(r, "length", 20)
	}
	if err == nil {
		var ss []string
		if ss, err = statuses(r, uistore.TaskRunning, uistore.TaskSuccess, uistore.TaskFailed, uistore.TaskKilled); len(ss) > 0 {
			q.Status = ss[0]
		}
	}
	if err != nil {
		apiError(w, err)
		return
	}
	ts, err := st.Tasks(k, q, s.o.Now())
	if err != nil {
		apiError(w, err)
		return
	}
	writeJSON(w, ts)
}

func (s *server) apiTaskSummary(w http.ResponseWriter, r *http.Request, st *uistore.Store) {
	k, err := stageKey(r)
	if err != nil {
		apiError(w, err)
		return
	}
	var qs []float64
	if v := r.URL.Query().Get("quantiles"); v != "" {
		for _, f := range strings.Split(v, ",") {
			q, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				apiError(w, fmt.Errorf("%w: quantiles %q: %q is not a number", uistore.ErrBadQuery, v, f))
				return
			}
			qs = append(qs, q)
		}
	}
	d, ok, err := st.TaskSummary(k, qs)
	switch {
	case err != nil:
		apiError(w, err)
	case !ok:
		apiError(w, fmt.Errorf("%w: no task of stage %d attempt %d has succeeded yet", uistore.ErrNotFound, k.ID, k.Attempt))
	default:
		writeJSON(w, d)
	}
}

func (s *server) apiExecutors(activeOnly bool) func(http.ResponseWriter, *http.Request, *uistore.Store) {
	return func(w http.ResponseWriter, r *http.Request, st *uistore.Store) {
		xs := st.Executors(activeOnly)
		if s.o.Sandbox != nil {
			for i := range xs {
				q := "executors/logs/?id=" + url.QueryEscape(xs[i].ID) + "&file="
				xs[i].ExecutorLogs = map[string]string{"stdout": appBase(r) + q + "stdout", "stderr": appBase(r) + q + "stderr"}
			}
		}
		writeJSON(w, xs)
	}
}

// appBase is where an application's pages are, for links in REST answers.
func appBase(r *http.Request) string {
	if strings.HasPrefix(r.URL.Path, "/api/v1/applications/") && r.Host != "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		return scheme + "://" + r.Host + "/"
	}
	return "/"
}

func (s *server) apiEnvironment(w http.ResponseWriter, r *http.Request, st *uistore.Store) {
	writeJSON(w, st.Environment())
}
