package agent

import (
	"net/http"
	"sort"
)

// agentState is the subset of Mesos' agent /state that operators and
// `flint mesos logs` use: the work dir (sandbox paths derive from it) and
// the running executors with their sandbox directories.
type agentState struct {
	ID       string            `json:"id"`
	Hostname string            `json:"hostname"`
	Flags    map[string]string `json:"flags"`
	// Resources is the agent's total; UsedResources what its executors and
	// live tasks hold, command executors' allowance included.
	Resources     map[string]any   `json:"resources"`
	UsedResources map[string]any   `json:"used_resources"`
	Frameworks    []stateFramework `json:"frameworks"`
}

type stateFramework struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Executors []stateExecutor `json:"executors"`
}

type stateExecutor struct {
	ID        string      `json:"id"`
	Name      string      `json:"name"`
	Container string      `json:"container"`
	Directory string      `json:"directory"`
	Tasks     []stateTask `json:"tasks"`
}

type stateTask struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	State       string `json:"state"`
	FrameworkID string `json:"framework_id"`
	ExecutorID  string `json:"executor_id"`
	SlaveID     string `json:"slave_id"`
}

// serveState answers GET /state (and /slave(1)/state) with agentState.
func (a *Agent) serveState(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Expecting 'GET', received '"+r.Method+"'", http.StatusMethodNotAllowed)
		return
	}
	writeJSONAnswer(w, a.snapshotState())
}

// Frameworks returns the ids of the frameworks the agent keeps, sorted:
// those with an executor (launching, running or ending) or with status
// updates not yet acknowledged. The agent forgets the others, as /state
// shows.
func (a *Agent) Frameworks() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, 0, len(a.frameworks))
	for id := range a.frameworks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

func (a *Agent) snapshotState() agentState {
	a.mu.Lock()
	defer a.mu.Unlock()
	st := agentState{ID: a.agentID, Hostname: a.cfg.Hostname, Flags: map[string]string{"work_dir": a.cfg.WorkDir},
		Frameworks: []stateFramework{}}
	_, used := a.usageLocked()
	st.Resources, st.UsedResources = newTally(a.resources).jsonMap(), used.jsonMap()
	for _, fw := range a.frameworks {
		sf := stateFramework{ID: fw.id().Value, Name: fw.info.Name, Executors: []stateExecutor{}}
		for _, ex := range fw.executors {
			se := stateExecutor{ID: ex.info.ExecutorID.Value, Name: ex.info.GetName(), Container: ex.containerID,
				Directory: ex.sandbox, Tasks: []stateTask{}}
			for _, t := range ex.tasks {
				se.Tasks = append(se.Tasks, stateTask{ID: t.info.TaskID.Value, Name: t.info.Name, State: t.state.String(),
					FrameworkID: sf.ID, ExecutorID: se.ID, SlaveID: a.agentID})
			}
			sort.Slice(se.Tasks, func(i, j int) bool { return se.Tasks[i].ID < se.Tasks[j].ID })
			sf.Executors = append(sf.Executors, se)
		}
		sort.Slice(sf.Executors, func(i, j int) bool { return sf.Executors[i].ID < sf.Executors[j].ID })
		st.Frameworks = append(st.Frameworks, sf)
	}
	sort.Slice(st.Frameworks, func(i, j int) bool { return st.Frameworks[i].ID < st.Frameworks[j].ID })
	return st
}
