package dispatcher

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/mesoslabel"
	"github.com/flint-mesos/flint/uri/fileserver"
)

// LauncherName is the file name the launcher (the flint binary) is fetched as
// into a driver's sandbox; a program may not use it.
const LauncherName = "flint-exec-driver"

// grantTTL bounds a driver task's fetch grant; it is revoked earlier, when the
// task runs or ends.
const grantTTL = 30 * time.Minute

func grantOwner(taskID string) string { return "dispatcher-driver/" + taskID }

// taskInfo builds a driver's Mesos task: the launcher and the program fetched
// (uploaded ones from the dispatcher's file server with a grant for this task
// only), the command `flint-exec-driver dispatcher exec-driver [--sha256 H] --
// ./PROGRAM [submit --example NAME] --master M --name N --conf k=v… -- ARGS`, the
// submission's environment and its secret settings as Mesos SECRET environment
// variables (FLINT_* names the driver's configuration reads).
func (d *Dispatcher) taskInfo(r Record, taskID string, agent mesos.AgentID, res mesos.Resources) (mesos.TaskInfo, error) {
	s := r.Spec
	if s.Name == LauncherName {
		return mesos.TaskInfo{}, fmt.Errorf("dispatcher: the program may not be named %s", LauncherName)
	}
	var prog mesos.CommandInfo_URI
	files := []fileserver.FileURL{d.launcher}
	if s.Resource == "sha256:"+s.SHA256 {
		path, err := d.cfg.Binaries.Path(s.SHA256)
		if err != nil {
			return mesos.TaskInfo{}, err
		}
		fu, err := d.cfg.Files.AddFile(path)
		if err != nil {
			return mesos.TaskInfo{}, fmt.Errorf("dispatcher: serving %s: %w", s.Resource, err)
		}
		files = append(files, fu)
		prog = mesos.CommandInfo_URI{Value: fu.URL}
	} else {
		prog = mesos.CommandInfo_URI{Value: s.Resource}
	}
	extra, err := d.serveFiles(s.Files)
	if err != nil {
		return mesos.TaskInfo{}, err
	}
	files = append(files, extra...)
	token, err := d.cfg.Files.Grant(grantOwner(taskID), grantTTL, files...)
	if err != nil {
		return mesos.TaskInfo{}, fmt.Errorf("dispatcher: fetch grant: %w", err)
	}
	if s.Resource == "sha256:"+s.SHA256 {
		prog.Value += "?token=" + token
	}
	prog.Executable, prog.OutputFile = ptr(true), ptr(s.Name)
	launcher := mesos.CommandInfo_URI{Value: d.launcher.URL + "?token=" + token, Executable: ptr(true), OutputFile: ptr(LauncherName), Cache: ptr(false)}
	uris := []mesos.CommandInfo_URI{launcher, prog}
	for i, fu := range extra {
		uris = append(uris, mesos.CommandInfo_URI{Value: fu.URL + "?token=" + token, OutputFile: ptr(s.Files[i].Name), Cache: ptr(false)})
	}
	env, err := d.environment(s)
	if err != nil {
		return mesos.TaskInfo{}, err
	}
	args := []string{LauncherName, "dispatcher", "exec-driver"}
	if s.SHA256 != "" {
		args = append(args, "--sha256", s.SHA256)
	}
	args = append(args, "--", "./"+s.Name)
	props := maps.Clone(s.Properties)
	if props == nil {
		props = map[string]string{}
	}
	if r.DriverFrameworkID != "" {
		props[driverFrameworkKey] = r.DriverFrameworkID
	}
	if props[appIDKey] == "" { // the page links the driver's event log by it
		props[appIDKey] = taskID
	}
	if len(s.Files) > 0 { // in the sandbox, the driver's working directory; its tasks get them too
		names := make([]string, 0, len(s.Files)+1)
		if v := props[filesKey]; v != "" {
			names = append(names, v)
		}
		for _, f := range s.Files {
			names = append(names, f.Name)
		}
		props[filesKey] = strings.Join(names, ",")
	}
	s.Properties = props
	args = append(args, DriverArgs(s, d.cfg.DriverMaster, r.ID)...)
	labels, err := driverTaskLabels(r)
	if err != nil {
		return mesos.TaskInfo{}, err
	}
	return mesos.TaskInfo{
		Name:      "driver " + r.ID,
		TaskID:    mesos.TaskID{Value: taskID},
		AgentID:   agent,
		Resources: res,
		Command: &mesos.CommandInfo{
			Shell:       ptr(false),
			Value:       ptr("./" + LauncherName),
			Arguments:   args,
			URIs:        uris,
			Environment: env,
		},
		Labels: labels,
	}, nil
}

// driverLabelsKey labels the driver's Mesos task (Spark's
// spark.mesos.driver.labels, which MesosClusterScheduler puts on the
// driver's TaskInfo); the driver, given the same property, also labels
// its own framework (mesosbackend.Subscribe).
const driverLabelsKey = "flint.mesos.driver.labels"

// submissionLabel is the dispatcher's own label of a driver's task: the
// submission it runs.
const submissionLabel = "flint.dispatcher.submission"

// driverTaskLabels are a driver task's labels: the submission's id, then
// the submission's flint.mesos.driver.labels in their order.
func driverTaskLabels(r Record) (*mesos.Labels, error) {
	user, err := mesoslabel.Parse(r.Spec.Properties[driverLabelsKey])
	if err != nil { // checked at submission; a record stored before then
		return nil, fmt.Errorf("dispatcher: %s: %w", driverLabelsKey, err)
	}
	return &mesos.Labels{Labels: append([]mesos.Label{{Key: submissionLabel, Value: ptr(r.ID)}}, user...)}, nil
}

// DriverArgs is the program's command line after its name: a bundled example
// runs as `submit --example NAME`; Flint's flags (master, name, the non-secret
// properties as --conf in key order), then -- and the application's arguments.
func DriverArgs(s Spec, master, id string) []string {
	var args []string
	if s.Example != "" {
		args = append(args, "submit", "--example", s.Example)
	}
	name := s.AppName
	if name == "" {
		name = s.Example
	}
	if name == "" {
		name = s.Name
	}
	args = append(args, "--master", master, "--name", name+" ("+id+")")
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		if k != "flint.app.name" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, "--conf", k+"="+s.Properties[k])
	}
	args = append(args, "--")
	return append(args, s.Args...)
}

// environment is the driver's environment: the submission's variables, and its
// secret settings as SECRET variables holding value secrets (opened here, at
// launch, never stored in clear).
func (d *Dispatcher) environment(s Spec) (*mesos.Environment, error) {
	var vars []mesos.Environment_Variable
	names := make([]string, 0, len(s.Env))
	for k := range s.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		vars = append(vars, mesos.Environment_Variable{Name: k, Value: ptr(s.Env[k])})
	}
	keys := make([]string, 0, len(s.Secrets))
	for k := range s.Secrets {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := d.cfg.Sealer.Open(s.Secrets[k])
		if err != nil {
			return nil, fmt.Errorf("dispatcher: secret %s: %w", k, err)
		}
		vars = append(vars, mesos.Environment_Variable{
			Name: config.EnvName(k), Type: mesos.Environment_Variable_SECRET.Enum(),
			Secret: &mesos.Secret{Type: mesos.Secret_VALUE, Value: &mesos.Secret_Value{Data: []byte(v)}},
		})
	}
	return &mesos.Environment{Variables: vars}, nil
}

func ptr[T any](v T) *T { return &v }

// Exit statuses of `flint dispatcher exec-driver` that name why a driver could
// not start; Reason turns them into the status message.
const (
	ExitNotFlint = 80 // the program is not a Flint program
	ExitChecksum = 81 // the fetched program's SHA-256 is not the submitted one
	ExitNoExec   = 82 // the program could not be started
)

var exitRE = regexp.MustCompile(`exited with status (\d+)`)

// Reason is the one-line reason a driver's task state gives: the launcher's
// exit statuses named, the Mesos message otherwise.
func Reason(st mesos.TaskStatus) string {
	msg := st.GetMessage()
	if m := exitRE.FindStringSubmatch(msg); m != nil {
		code, _ := strconv.Atoi(m[1])
		switch code {
		case ExitNotFlint:
			return "the program is not a Flint program (its Go build information names no github.com/flint-mesos/flint module); build it with flint.Main"
		case ExitChecksum:
			return "the fetched program's SHA-256 is not the submitted appResourceSha256"
		case ExitNoExec:
			return "the program could not be started (see the driver's stderr)"
		case 0:
		default:
			return fmt.Sprintf("the driver exited with status %d (see its stderr)", code)
		}
	}
	if msg == "" {
		msg = st.GetState().String()
		if r := st.GetReason(); r != 0 {
			msg += " (" + r.String() + ")"
		}
	}
	return msg
}

const driverFrameworkKey = "flint.mesos.driver.frameworkId"

// appIDKey is the driver's application id: its task id unless the submission
// sets one, so that the page links each attempt's event log
// (<history>/history/<task id>/jobs/).
const appIDKey = "flint.app.id"

// filesKey lists the files every task can read (Spark's spark.files): the
// submission's http(s) ones, then its uploaded ones by their sandbox names.
const filesKey = "flint.files"

// driverFrameworkLocked is the framework id a supervised driver's next attempt
// subscribes with: the previous attempt's while the master still has that
// framework (a driver that died without tearing it down, within its
// flint.mesos.failoverTimeout), so the master keeps the framework and its
// tasks and the new driver reconciles them; else a new one,
// <dispatcher framework>-<submission>-<attempt> (a master refuses an id it has
// removed). Unsupervised drivers, and submissions that set the key themselves,
// keep Mesos' choice / theirs ("").
func (d *Dispatcher) driverFrameworkLocked(r Record) string {
	if !r.Spec.Supervise || r.Spec.Properties[driverFrameworkKey] != "" {
		return ""
	}
	if r.DriverFrameworkID != "" && !d.frameworkRemoved(r.DriverFrameworkID) {
		return r.DriverFrameworkID
	}
	return fmt.Sprintf("%s-%s-%d", d.conn.FrameworkID(), r.ID, r.Attempts+1)
}

// frameworkRemoved reports whether the leading master lists framework id as
// completed (removed), or cannot be asked (then a new id is the safe choice).
func (d *Dispatcher) frameworkRemoved(id string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+mesosconn.MasterAddr(d.conn.Master())+"/master/state", nil)
	if err != nil {
		return true
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return true
	}
	defer resp.Body.Close()
	var st struct {
		Frameworks []struct {
			ID string `json:"id"`
		} `json:"frameworks"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&st) != nil {
		return true
	}
	for _, f := range st.Frameworks {
		if f.ID == id {
			return false
		}
	}
	return true
}

// AgentCapacity is an agent's total resources.
type AgentCapacity struct {
	ID, Host    string
	CPUs, MemMB float64
}

// MasterCapacity asks a master's /master/state for its agents' resources.
func MasterCapacity(ctx context.Context, master string) ([]AgentCapacity, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+master+"/master/state", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("dispatcher: %s/master/state: %s", master, resp.Status)
	}
	var st struct {
		Slaves []struct {
			ID        string `json:"id"`
			Hostname  string `json:"hostname"`
			Resources struct {
				CPUs float64 `json:"cpus"`
				Mem  float64 `json:"mem"`
			} `json:"resources"`
		} `json:"slaves"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return nil, fmt.Errorf("dispatcher: %s/master/state: %w", master, err)
	}
	out := make([]AgentCapacity, 0, len(st.Slaves))
	for _, s := range st.Slaves {
		out = append(out, AgentCapacity{ID: s.ID, Host: s.Hostname, CPUs: s.Resources.CPUs, MemMB: s.Resources.Mem})
	}
	return out, nil
}

// DriverUIs asks the leading master which of the dispatcher's drivers run a
// framework with a web UI: a driver's framework is named "NAME (ID)"
// (DriverArgs), so its UI is that framework's webui_url.
func (d *Dispatcher) DriverUIs() map[string]string {
	master := d.MasterAddr()
	if master == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+master+"/master/state", nil)
	if err != nil {
		return nil
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var st struct {
		Frameworks []struct {
			Name     string `json:"name"`
			WebUIURL string `json:"webui_url"`
		} `json:"frameworks"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return nil
	}
	out := map[string]string{}
	for _, f := range st.Frameworks {
		if m := fwNameRE.FindStringSubmatch(f.Name); m != nil && f.WebUIURL != "" {
			out[m[1]] = f.WebUIURL
		}
	}
	return out
}

var fwNameRE = regexp.MustCompile(`\((driver-[0-9]{14}-[0-9a-f]{4})\)$`)

// Unfit says why no agent in agents can ever hold a driver of cpus and memMB,
// or "" when one can (or when no agent is known yet: a cluster still starting
// is no proof).
func Unfit(cpus, memMB float64, agents []AgentCapacity) string {
	if len(agents) == 0 {
		return ""
	}
	var best AgentCapacity
	for _, a := range agents {
		if a.CPUs >= cpus && a.MemMB >= memMB {
			return ""
		}
		if a.CPUs > best.CPUs || a.CPUs == best.CPUs && a.MemMB > best.MemMB {
			best = a
		}
	}
	return fmt.Sprintf("no agent can ever run this driver: it needs %g cpus and %g MB; the largest of the %d agents has %g cpus and %g MB (lower --driver-cores/--driver-memory)",
		cpus, memMB, len(agents), best.CPUs, best.MemMB)
}

// capacityEvery bounds how often the master's state is asked.
const capacityEvery = 10 * time.Second

// failUnplaceableLocked fails the waiting drivers no agent can ever hold.
func (d *Dispatcher) failUnplaceableLocked(waiting []Record, now time.Time) {
	if len(waiting) == 0 {
		return
	}
	if d.capAt.IsZero() || now.Sub(d.capAt) >= capacityEvery {
		d.capAt = now
		caps, err := d.cfg.Capacity(context.Background(), mesosconn.MasterAddr(d.conn.Master()))
		if err != nil {
			d.log.WithError(err).Debug("asking the master for its agents")
		} else {
			d.capacity = caps
		}
	}
	for _, w := range waiting {
		if why := Unfit(w.Spec.Cores, w.Spec.MemMB, d.capacity); why != "" {
			if r := d.core.Unplaceable(w.ID, why, now); r != nil {
				d.saveLocked(*r)
				d.log.WithField("submission", w.ID).Warn(why)
			}
		}
	}
}

// appID is the application id of the record's last launch: the one its
// submission set, else its task id (taskInfo).
func (r Record) appID() string {
	if id := r.Spec.Properties[appIDKey]; id != "" {
		return id
	}
	return r.TaskID
}

// serveFiles publishes a submission's uploaded files on the file server
// (each fetched under the grant of the driver's task only).
func (d *Dispatcher) serveFiles(refs []FileRef) ([]fileserver.FileURL, error) {
	var out []fileserver.FileURL
	for _, f := range refs {
		path, err := d.cfg.Binaries.Path(strings.TrimPrefix(f.Resource, "sha256:"))
		if err != nil {
			return nil, fmt.Errorf("dispatcher: file %s: %w", f.Name, err)
		}
		fu, err := d.cfg.Files.AddFile(path)
		if err != nil {
			return nil, fmt.Errorf("dispatcher: serving file %s: %w", f.Name, err)
		}
		out = append(out, fu)
	}
	return out, nil
}
