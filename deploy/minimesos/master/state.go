package master

import (
	"encoding/json"
	"net/http"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// The /state document, in Mesos' field names.
type stateDoc struct {
	Version             string            `json:"version"`
	ID                  string            `json:"id"`
	PID                 string            `json:"pid"`
	Hostname            string            `json:"hostname"`
	Leader              string            `json:"leader"`
	LeaderInfo          mesos.MasterInfo  `json:"leader_info"`
	StartTime           float64           `json:"start_time"`
	ElectedTime         float64           `json:"elected_time"`
	ActivatedSlaves     float64           `json:"activated_slaves"`
	DeactivatedSlaves   float64           `json:"deactivated_slaves"`
	UnreachableSlaves   float64           `json:"unreachable_slaves"`
	Slaves              []stateAgent      `json:"slaves"`
	Frameworks          []stateFw         `json:"frameworks"`
	CompletedFrameworks []stateFw         `json:"completed_frameworks"`
	Flags               map[string]string `json:"flags"`
}

type stateAgent struct {
	ID                  string         `json:"id"`
	PID                 string         `json:"pid"`
	Hostname            string         `json:"hostname"`
	Port                int32          `json:"port"`
	RegisteredTime      float64        `json:"registered_time"`
	Resources           map[string]any `json:"resources"`
	UsedResources       map[string]any `json:"used_resources"`
	OfferedResources    map[string]any `json:"offered_resources"`
	UnreservedResources map[string]any `json:"unreserved_resources"`
	Attributes          map[string]any `json:"attributes"`
	Active              bool           `json:"active"`
	Version             string         `json:"version"`
}

type stateFw struct {
	ID               string         `json:"id"`
	Name             string         `json:"name"`
	PID              string         `json:"pid,omitempty"`
	User             string         `json:"user"`
	Role             string         `json:"role"`
	Roles            []string       `json:"roles"`
	Principal        string         `json:"principal,omitempty"`
	Hostname         string         `json:"hostname"`
	WebUIURL         string         `json:"webui_url"`
	FailoverTimeout  float64        `json:"failover_timeout"`
	Checkpoint       bool           `json:"checkpoint"`
	Capabilities     []string       `json:"capabilities"`
	Active           bool           `json:"active"`
	Connected        bool           `json:"connected"`
	Recovered        bool           `json:"recovered"`
	RegisteredTime   float64        `json:"registered_time"`
	ReregisteredTime float64        `json:"reregistered_time,omitempty"`
	UnregisteredTime float64        `json:"unregistered_time"`
	Resources        map[string]any `json:"resources"`
	UsedResources    map[string]any `json:"used_resources"`
	OfferedResources map[string]any `json:"offered_resources"`
	Tasks            []stateTask    `json:"tasks"`
	UnreachableTasks []stateTask    `json:"unreachable_tasks"`
	CompletedTasks   []stateTask    `json:"completed_tasks"`
	Offers           []stateOffer   `json:"offers"`
	Executors        []stateExec    `json:"executors"`
}

type stateTask struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	FrameworkID string         `json:"framework_id"`
	ExecutorID  string         `json:"executor_id"`
	SlaveID     string         `json:"slave_id"`
	State       string         `json:"state"`
	Role        string         `json:"role,omitempty"`
	Resources   map[string]any `json:"resources"`
	Statuses    []stateStatus  `json:"statuses"`
}

type stateStatus struct {
	State     string  `json:"state"`
	Timestamp float64 `json:"timestamp"`
}

type stateOffer struct {
	ID          string         `json:"id"`
	FrameworkID string         `json:"framework_id"`
	SlaveID     string         `json:"slave_id"`
	Resources   map[string]any `json:"resources"`
}

type stateExec struct {
	ExecutorID  string         `json:"executor_id"`
	Name        string         `json:"name"`
	FrameworkID string         `json:"framework_id"`
	SlaveID     string         `json:"slave_id"`
	Resources   map[string]any `json:"resources"`
}

// resourceMap renders resources as Mesos' JSON model does: scalars by
// name, ranges as "[a-b, c-d]", sets as "{a, b}".
func resourceMap(rs mesos.Resources) map[string]any {
	out := map[string]any{"cpus": 0.0, "mem": 0.0, "disk": 0.0, "gpus": 0.0}
	for _, r := range rs {
		switch {
		case r.Scalar != nil:
			v, _ := out[r.Name].(float64)
			out[r.Name] = v + r.Scalar.Value
		case r.Ranges != nil:
			s, _ := out[r.Name].(string)
			if s != "" {
				s = s[1 : len(s)-1]
			}
			for _, rg := range r.Ranges.Range {
				if s != "" {
					s += ", "
				}
				s += itoa(rg.Begin) + "-" + itoa(rg.End)
			}
			out[r.Name] = "[" + s + "]"
		case r.Set != nil:
			s := "{"
			for i, it := range r.Set.Item {
				if i > 0 {
					s += ", "
				}
				s += it
			}
			out[r.Name] = s + "}"
		}
	}
	return out
}

func itoa(v uint64) string { b, _ := json.Marshal(v); return string(b) }

func attributeMap(as []mesos.Attribute) map[string]any {
	out := map[string]any{}
	for _, a := range as {
		switch {
		case a.Scalar != nil:
			out[a.Name] = a.Scalar.Value
		case a.Text != nil:
			out[a.Name] = a.Text.Value
		case a.Ranges != nil:
			out[a.Name] = resourceMap(mesos.Resources{{Name: "r", Type: mesos.RANGES.Enum(), Ranges: a.Ranges}})["r"]
		case a.Set != nil:
			out[a.Name] = resourceMap(mesos.Resources{{Name: "s", Type: mesos.SET.Enum(), Set: a.Set}})["s"]
		}
	}
	return out
}

func secs(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}

func taskDoc(t *task) stateTask {
	d := stateTask{ID: t.t.TaskID.Value, Name: t.t.Name, FrameworkID: t.t.FrameworkID.Value,
		ExecutorID: t.t.GetExecutorID().GetValue(), SlaveID: t.t.AgentID.Value, State: t.state().String(),
		Resources: resourceMap(t.t.Resources), Statuses: []stateStatus{}}
	if len(t.t.Resources) > 0 && t.t.Resources[0].AllocationInfo != nil {
		d.Role = t.t.Resources[0].AllocationInfo.GetRole()
	}
	for _, s := range t.t.Statuses {
		d.Statuses = append(d.Statuses, stateStatus{State: s.GetState().String(), Timestamp: s.GetTimestamp()})
	}
	return d
}

func (m *Master) frameworkDoc(f *framework) stateFw {
	d := stateFw{ID: f.id, Name: f.info.Name, User: f.info.User, Roles: frameworkRoles(&f.info),
		Principal: f.info.GetPrincipal(), Hostname: f.info.GetHostname(), WebUIURL: f.info.GetWebUiURL(),
		FailoverTimeout: f.info.GetFailoverTimeout(), Checkpoint: f.info.GetCheckpoint(),
		Capabilities: []string{}, Active: f.active, Connected: f.sub != nil, Recovered: f.recoveredOnly,
		RegisteredTime: secs(f.registered), ReregisteredTime: secs(f.reregistered), UnregisteredTime: secs(f.unregistered),
		Tasks: []stateTask{}, UnreachableTasks: []stateTask{}, CompletedTasks: []stateTask{}, Offers: []stateOffer{}, Executors: []stateExec{}}
	d.Role = d.Roles[0]
	for _, c := range f.info.Capabilities {
		d.Capabilities = append(d.Capabilities, c.GetType().String())
	}
	var used, offered mesos.Resources
	for _, id := range sortedKeys(f.tasks) {
		t := f.tasks[id]
		d.Tasks = append(d.Tasks, taskDoc(t))
		if !isTerminal(t.state()) {
			used = used.Plus(t.t.Resources...)
		}
	}
	for _, id := range sortedKeys(f.unreachableTasks) {
		d.UnreachableTasks = append(d.UnreachableTasks, taskDoc(f.unreachableTasks[id]))
	}
	for _, t := range f.completedTasks {
		d.CompletedTasks = append(d.CompletedTasks, taskDoc(t))
	}
	for _, aid := range sortedKeys(f.executors) {
		for _, eid := range sortedKeys(f.executors[aid]) {
			e := f.executors[aid][eid]
			used = used.Plus(e.Resources...)
			d.Executors = append(d.Executors, stateExec{ExecutorID: eid, Name: e.GetName(), FrameworkID: f.id, SlaveID: aid, Resources: resourceMap(e.Resources)})
		}
	}
	for _, id := range sortedKeys(f.offers) {
		o := f.offers[id]
		offered = offered.Plus(o.res...)
		d.Offers = append(d.Offers, stateOffer{ID: id, FrameworkID: f.id, SlaveID: o.agent, Resources: resourceMap(o.res)})
	}
	d.UsedResources = resourceMap(used)
	d.OfferedResources = resourceMap(offered)
	d.Resources = resourceMap(used.Plus(offered...))
	return d
}

func (m *Master) agentDoc(a *agent) stateAgent {
	var used, offered mesos.Resources
	for _, f := range m.fws {
		for _, t := range f.tasks {
			if t.t.AgentID.Value == a.id && !isTerminal(t.state()) {
				used = used.Plus(t.t.Resources...)
			}
		}
		for _, e := range f.executors[a.id] {
			used = used.Plus(e.Resources...)
		}
	}
	for _, o := range m.offers {
		if o.agent == a.id {
			offered = offered.Plus(o.res...)
		}
	}
	port := a.info.GetPort()
	return stateAgent{ID: a.id, PID: "slave(1)@" + a.endpoint, Hostname: a.info.Hostname, Port: port,
		RegisteredTime: secs(a.registered), Resources: resourceMap(a.total), UsedResources: resourceMap(used),
		OfferedResources: resourceMap(offered), UnreservedResources: resourceMap(a.total),
		Attributes: attributeMap(a.info.Attributes), Active: a.active, Version: Version}
}

// State returns the /state document as JSON-ready data.
func (m *Master) state() stateDoc {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := stateDoc{Version: Version, ID: m.cfg.ID, PID: m.info.GetPID(), Hostname: m.cfg.Hostname,
		Leader: m.info.GetPID(), LeaderInfo: m.info, StartTime: secs(m.started), ElectedTime: secs(m.elected),
		UnreachableSlaves: float64(len(m.unreachable)), Slaves: []stateAgent{}, Frameworks: []stateFw{},
		CompletedFrameworks: []stateFw{}, Flags: m.flags()}
	for _, id := range sortedKeys(m.agents) {
		a := m.agents[id]
		d.Slaves = append(d.Slaves, m.agentDoc(a))
		if a.active {
			d.ActivatedSlaves++
		} else {
			d.DeactivatedSlaves++
		}
	}
	for _, id := range sortedKeys(m.fws) {
		d.Frameworks = append(d.Frameworks, m.frameworkDoc(m.fws[id]))
	}
	for _, f := range m.completed {
		d.CompletedFrameworks = append(d.CompletedFrameworks, m.frameworkDoc(f))
	}
	return d
}

func (m *Master) flags() map[string]string {
	auth := "false"
	if m.cfg.Credentials != nil {
		auth = "true"
	}
	return map[string]string{
		"allocation_interval":     m.cfg.AllocationInterval.String(),
		"authenticate_frameworks": auth,
		"max_agent_ping_timeouts": itoa(uint64(m.cfg.AgentMaxMissedPings)),
		"agent_ping_timeout":      m.cfg.AgentPingInterval.String(),
		"offer_timeout":           m.cfg.OfferTimeout.String(),
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func (m *Master) serveState(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Expecting 'GET'", http.StatusMethodNotAllowed)
		return
	}
	writeJSON(w, m.state())
}

func (m *Master) serveHealth(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// counters always present in /metrics/snapshot (see the package doc).
var counters = []string{
	"master/tasks_finished", "master/tasks_failed", "master/tasks_killed", "master/tasks_lost",
	"master/tasks_error", "master/tasks_dropped", "master/tasks_gone", "master/tasks_gone_by_operator",
	"master/tasks_launched", "master/offers_sent", "master/offers_declined", "master/offers_rescinded",
	"master/offers_rescinded_timeout", "master/frameworks_registered", "master/frameworks_removed",
	"master/slave_registrations", "master/slave_reregistrations", "master/slave_removals",
	"master/valid_status_updates", "master/invalid_status_updates",
	"master/valid_status_update_acknowledgements", "master/invalid_status_update_acknowledgements",
	"master/messages_invalid_calls",
}

// Metrics returns the /metrics/snapshot counters and gauges.
func (m *Master) Metrics() map[string]float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]float64, len(m.metrics)+16)
	for k, v := range m.metrics {
		out[k] = v
	}
	var active, connected, tasks float64
	gauges := map[mesos.TaskState]float64{}
	for _, f := range m.fws {
		if f.active {
			active++
		}
		if f.sub != nil {
			connected++
		}
		for _, t := range f.tasks {
			tasks++
			gauges[t.state()]++
		}
		gauges[mesos.TASK_UNREACHABLE] += float64(len(f.unreachableTasks))
	}
	var agentsActive, agentsConnected float64
	for _, a := range m.agents {
		if a.active {
			agentsActive++
		}
		if a.connected {
			agentsConnected++
		}
	}
	st := m.alloc.Stats()
	out["master/elected"] = 1
	out["master/uptime_secs"] = m.cfg.Clock.Now().Sub(m.started).Seconds()
	out["master/frameworks_active"] = active
	out["master/frameworks_connected"] = connected
	out["master/frameworks_disconnected"] = float64(len(m.fws)) - connected
	out["master/frameworks_inactive"] = float64(len(m.fws)) - active
	out["master/slaves_active"] = agentsActive
	out["master/slaves_inactive"] = float64(len(m.agents)) - agentsActive
	out["master/slaves_connected"] = agentsConnected
	out["master/slaves_disconnected"] = float64(len(m.agents)) - agentsConnected
	out["master/slaves_unreachable"] = float64(len(m.unreachable))
	out["master/outstanding_offers"] = float64(len(m.offers))
	for _, s := range []mesos.TaskState{mesos.TASK_STAGING, mesos.TASK_STARTING, mesos.TASK_RUNNING, mesos.TASK_KILLING, mesos.TASK_UNREACHABLE} {
		out["master/tasks_"+lower(s.String()[len("TASK_"):])] = gauges[s]
	}
	for _, name := range counters {
		out[name] = m.metrics[name] // present from the start, as in Mesos
	}
	out["master/tasks_active"] = tasks
	for name, v := range st.Total {
		out["master/"+name+"_total"] = v
		out["master/"+name+"_used"] = 0
	}
	// Used as in Mesos: by tasks (until terminal) and executors, not offers.
	for _, f := range m.fws {
		for _, t := range f.tasks {
			if !t.recovered {
				addScalars(out, t.t.Resources)
			}
		}
		for _, es := range f.executors {
			for _, e := range es {
				addScalars(out, e.Resources)
			}
		}
	}
	out["allocator/filters"] = float64(st.Filters)
	return out
}

func addScalars(out map[string]float64, rs mesos.Resources) {
	for _, r := range rs {
		if r.Scalar != nil {
			out["master/"+r.Name+"_used"] += r.Scalar.Value
		}
	}
}

func (m *Master) serveMetrics(w http.ResponseWriter, _ *http.Request) { writeJSON(w, m.Metrics()) }
