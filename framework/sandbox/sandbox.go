package sandbox

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/internal/redact"
)

// ErrNotFound means the master knows no such task, or its agent is gone.
var ErrNotFound = errors.New("sandbox: not found")

// Sandbox is where a task's executor ran: the agent serving it and the
// run directory on that agent.
type Sandbox struct {
	AgentID  string
	AgentURL string // http://host:port of the agent
	Dir      string // .../slaves/S/frameworks/F/executors/E/runs/latest
}

type masterState struct {
	Slaves []struct {
		ID  string `json:"id"`
		PID string `json:"pid"`
	} `json:"slaves"`
	Frameworks          []stateFramework `json:"frameworks"`
	CompletedFrameworks []stateFramework `json:"completed_frameworks"`
}

type stateFramework struct {
	ID             string      `json:"id"`
	Tasks          []stateTask `json:"tasks"`
	CompletedTasks []stateTask `json:"completed_tasks"`
}

type stateTask struct {
	ID          string `json:"id"`
	FrameworkID string `json:"framework_id"`
	ExecutorID  string `json:"executor_id"`
	SlaveID     string `json:"slave_id"`
}

// MasterURL is the HTTP base URL of the master described by mi ("" when
// it names no host).
func MasterURL(mi mesos.MasterInfo) string {
	host, port := mi.GetHostname(), mi.GetPort()
	if a := mi.GetAddress(); a != nil {
		if a.GetIP() != "" {
			host = a.GetIP()
		} else if a.GetHostname() != "" {
			host = a.GetHostname()
		}
		if a.GetPort() != 0 {
			port = uint32(a.GetPort())
		}
	}
	if host == "" {
		return ""
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// Locate asks master (a base URL, http://host:port) where the task ran and
// that agent where its work directory is. frameworkID may be "" when task
// ids do not repeat across frameworks.
func Locate(ctx context.Context, c *http.Client, master, frameworkID, taskID string) (Sandbox, error) {
	var st masterState
	if err := getJSON(ctx, c, master+"/state", &st); err != nil {
		return Sandbox{}, err
	}
	t, err := findTask(&st, frameworkID, taskID)
	if err != nil {
		return Sandbox{}, err
	}
	return locateOn(ctx, c, &st, t, fmt.Sprintf("task %q", taskID))
}

// LocateExecutor finds the sandbox of executor executorID of frameworkID:
// a task of that id (a command executor's sandbox is named by its task) or
// a task run by an executor of that id (Flint's fine-mode executor).
func LocateExecutor(ctx context.Context, c *http.Client, master, frameworkID, executorID string) (Sandbox, error) {
	if master == "" || frameworkID == "" {
		return Sandbox{}, fmt.Errorf("sandbox: not subscribed to a master yet")
	}
	var st masterState
	if err := getJSON(ctx, c, master+"/state", &st); err != nil {
		return Sandbox{}, err
	}
	var found []stateTask
	for _, fws := range [][]stateFramework{st.Frameworks, st.CompletedFrameworks} {
		for _, fw := range fws {
			if fw.ID != frameworkID {
				continue
			}
			for _, ts := range [][]stateTask{fw.Tasks, fw.CompletedTasks} {
				for _, t := range ts {
					if t.ExecutorID == executorID || (t.ExecutorID == "" && t.ID == executorID) {
						t.FrameworkID = fw.ID
						found = append(found, t)
					}
				}
			}
		}
	}
	if len(found) == 0 {
		return Sandbox{}, fmt.Errorf("%w: the master at %s knows no executor %q of framework %s", ErrNotFound, master, executorID, frameworkID)
	}
	return locateOn(ctx, c, &st, found[len(found)-1], fmt.Sprintf("executor %q", executorID))
}

// locateOn asks the agent that ran t (found in the master's state st) for
// its work directory; what names the task or executor in errors.
func locateOn(ctx context.Context, c *http.Client, st *masterState, t stateTask, what string) (Sandbox, error) {
	var agentURL string
	for _, s := range st.Slaves {
		if s.ID == t.SlaveID {
			_, hostPort, _ := strings.Cut(s.PID, "@")
			agentURL = "http://" + hostPort
		}
	}
	if agentURL == "" {
		return Sandbox{}, fmt.Errorf("%w: %s ran on agent %s, which the master no longer lists", ErrNotFound, what, t.SlaveID)
	}
	var ast struct {
		Flags map[string]string `json:"flags"`
	}
	if err := getJSON(ctx, c, agentURL+"/state", &ast); err != nil {
		return Sandbox{}, fmt.Errorf("sandbox: agent %s: %w", t.SlaveID, err)
	}
	if ast.Flags["work_dir"] == "" {
		return Sandbox{}, fmt.Errorf("sandbox: agent %s reports no work_dir", t.SlaveID)
	}
	executor := t.ExecutorID
	if executor == "" {
		executor = t.ID // command tasks: the executor id is the task id
	}
	dir := path.Join(ast.Flags["work_dir"], "slaves", t.SlaveID, "frameworks", t.FrameworkID, "executors", executor, "runs", "latest")
	return Sandbox{AgentID: t.SlaveID, AgentURL: agentURL, Dir: dir}, nil
}

func findTask(st *masterState, frameworkID, taskID string) (stateTask, error) {
	var found []stateTask
	for _, fws := range [][]stateFramework{st.Frameworks, st.CompletedFrameworks} {
		for _, fw := range fws {
			if frameworkID != "" && fw.ID != frameworkID {
				continue
			}
			for _, ts := range [][]stateTask{fw.Tasks, fw.CompletedTasks} {
				for _, t := range ts {
					if t.ID == taskID {
						found = append(found, t)
					}
				}
			}
		}
	}
	switch {
	case len(found) == 0:
		return stateTask{}, fmt.Errorf("%w: the master knows no task %q", ErrNotFound, taskID)
	case len(found) > 1 && frameworkID == "":
		return stateTask{}, fmt.Errorf("sandbox: task %q exists in several frameworks; pick one with --framework", taskID)
	}
	return found[len(found)-1], nil
}

// Read returns up to length bytes of the sandbox file name from offset
// (Mesos' /files/read); an empty answer at the end of the file.
func (s Sandbox) Read(ctx context.Context, c *http.Client, name string, offset int64, length int) (string, error) {
	var page struct {
		Data   string `json:"data"`
		Offset int64  `json:"offset"`
	}
	q := url.Values{"path": {path.Join(s.Dir, name)}, "offset": {strconv.FormatInt(offset, 10)}, "length": {strconv.Itoa(length)}}
	if err := getJSON(ctx, c, s.AgentURL+"/files/read?"+q.Encode(), &page); err != nil {
		return "", err
	}
	return page.Data, nil
}

// Size returns the size of the sandbox file name (/files/read with offset -1).
func (s Sandbox) Size(ctx context.Context, c *http.Client, name string) (int64, error) {
	var page struct {
		Offset int64 `json:"offset"`
	}
	q := url.Values{"path": {path.Join(s.Dir, name)}, "offset": {"-1"}}
	if err := getJSON(ctx, c, s.AgentURL+"/files/read?"+q.Encode(), &page); err != nil {
		return 0, err
	}
	return page.Offset, nil
}

// tailBytes is how much of a file's end Tail reads to find its last lines.
const tailBytes = 64 << 10

// Tail returns the last n lines of the sandbox file name (fewer when the
// file is shorter; lines longer than 64 KiB are cut).
func (s Sandbox) Tail(ctx context.Context, c *http.Client, name string, n int) ([]string, error) {
	size, err := s.Size(ctx, c, name)
	if err != nil {
		return nil, err
	}
	from := max(0, size-tailBytes)
	data, err := s.Read(ctx, c, name, from, int(size-from))
	if err != nil {
		return nil, err
	}
	return lastLines(data, n, from > 0), nil
}

// lastLines returns the last n lines of data; cut says data starts inside
// a line, which is then dropped.
func lastLines(data string, n int, cut bool) []string {
	data = strings.TrimRight(data, "\n")
	if data == "" || n <= 0 {
		return nil
	}
	lines := strings.Split(data, "\n")
	if cut && len(lines) > 1 {
		lines = lines[1:]
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

func getJSON(ctx context.Context, c *http.Client, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("sandbox: GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: GET %s: %s", ErrNotFound, u, resp.Status)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("sandbox: GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("sandbox: GET %s: %w", u, err)
	}
	return nil
}

// Death is an executor's end as Mesos reported it.
type Death struct {
	ExecutorID  string // the executor's Mesos task id (command tasks: also its executor id)
	Host        string
	AgentID     string
	FrameworkID string
	// Status is the terminal status of its Mesos task; nil when none arrived.
	Status *mesos.TaskStatus
	// Lost is what the driver saw first (e.g. the executor's stream broke).
	Lost string
}

// StderrLines is how many of a dead executor's last stderr lines Describe shows.
const StderrLines = 20

// Describe says how an executor ended, for its job's error: where it ran,
// Mesos' verdict (the status message carries the exit status or signal)
// and the last lines of its stderr, read from its sandbox through the
// agent's /files/read, with the command that prints the whole file. The
// first line stands alone (logs show only it); the stderr follows. master
// is the master's base URL ("" when unknown: no stderr is fetched).
func Describe(ctx context.Context, c *http.Client, master string, d Death) string {
	var b strings.Builder
	fmt.Fprintf(&b, "it ran on %s (agent %s) and ", d.Host, d.AgentID)
	switch st := d.Status; {
	case st == nil:
		fmt.Fprintf(&b, "Mesos reported no end for it (%s)", d.Lost)
	default:
		msg := st.GetMessage()
		msg = cmp.Or(msg, "no message")
		fmt.Fprintf(&b, "ended: %s (%s", msg, st.GetState())
		if st.Reason != nil {
			fmt.Fprintf(&b, ", %s", st.GetReason())
		}
		b.WriteString(")")
	}
	if master == "" {
		return b.String()
	}
	sb, err := Locate(ctx, c, master, d.FrameworkID, d.ExecutorID)
	if err != nil {
		fmt.Fprintf(&b, "\n  its stderr could not be read: %v", err)
		return b.String()
	}
	lines, err := sb.Tail(ctx, c, "stderr", StderrLines)
	switch {
	case err != nil:
		fmt.Fprintf(&b, "\n  its stderr could not be read: %v", err)
	case len(lines) == 0:
		b.WriteString("\n  its stderr is empty")
	default:
		fmt.Fprintf(&b, "\n  last %d lines of its stderr:", len(lines))
		for _, l := range lines {
			b.WriteString("\n    " + redact.Text(l))
		}
	}
	fmt.Fprintf(&b, "\n  its sandbox: %s on %s; print its stderr with: flint mesos logs --master %s --framework %s --stderr %s",
		sb.Dir, d.Host, strings.TrimPrefix(master, "http://"), d.FrameworkID, d.ExecutorID)
	return b.String()
}
