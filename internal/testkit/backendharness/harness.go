package backendharness

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/mesosbackend"
)

// Harness is a fake Mesos connection and a fake driver for one backend.
type Harness struct {
	Conn   *Conn
	Driver *Driver

	mu      sync.Mutex
	handler mesosconn.Handler
}

// New returns a harness whose framework is "fw-1" on master "m1", at
// 127.0.0.1:1, where nothing listens: a backend reading an executor's
// sandbox through the master fails at once.
func New() *Harness {
	host, port := "127.0.0.1", uint32(1)
	return &Harness{Conn: &Conn{frameworkID: "fw-1", master: mesos.MasterInfo{ID: "m1", Hostname: &host, Port: &port}}, Driver: &Driver{}}
}

// Dial is a mesosbackend.Dialer: it keeps the backend's handler and hands
// out Conn as subscribed, with user "flint".
func (h *Harness) Dial(_ context.Context, handler mesosconn.Handler) (mesosbackend.Conn, string, error) {
	h.mu.Lock()
	h.handler = handler
	h.mu.Unlock()
	return h.Conn, "flint", nil
}

var _ mesosbackend.Dialer = (*Harness)(nil).Dial

// Handler is the handler the backend subscribed with: the test's Mesos
// events go to it (nil before the backend's Start dialed).
func (h *Harness) Handler() mesosconn.Handler {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.handler
}

// Call is one call the backend made on its Mesos connection.
type Call struct {
	Op         string // launch, decline, demand, kill, shutdown, message, stop
	OfferIDs   []string
	Tasks      []mesos.TaskInfo        // launch
	Reason     mesosconn.DeclineReason // decline
	On         bool                    // demand; stop: teardown
	TaskID     string                  // kill
	AgentID    string                  // kill (may be ""), shutdown, message
	ExecutorID string                  // shutdown, message
	Data       []byte                  // message
}

// String is the call in a script's words: "launch o1 [1 2]",
// "decline o2 (unfit)", "demand on", "kill 3 on S0", "shutdown E on S0",
// "message E on S0", "stop teardown".
func (c Call) String() string {
	switch c.Op {
	case "launch":
		ids := make([]string, len(c.Tasks))
		for i, t := range c.Tasks {
			ids[i] = t.TaskID.Value
		}
		return fmt.Sprintf("launch %s %v", strings.Join(c.OfferIDs, ","), ids)
	case "decline":
		return fmt.Sprintf("decline %s (%s)", strings.Join(c.OfferIDs, ","), c.Reason)
	case "demand":
		return "demand " + onOff(c.On)
	case "kill":
		return fmt.Sprintf("kill %s on %s", c.TaskID, c.AgentID)
	case "shutdown", "message":
		return fmt.Sprintf("%s %s on %s", c.Op, c.ExecutorID, c.AgentID)
	case "stop":
		if c.On {
			return "stop teardown"
		}
		return "stop"
	}
	return c.Op
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

// Conn is a fake Mesos connection that records every call. Its calls
// succeed unless LaunchErr is set.
type Conn struct {
	mu          sync.Mutex
	calls       []Call
	launchErr   error
	frameworkID string
	master      mesos.MasterInfo
}

var _ mesosbackend.Conn = (*Conn)(nil)

func (c *Conn) record(call Call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
}

// Calls returns the calls recorded since the last Calls, oldest first.
func (c *Conn) Calls() []Call {
	c.mu.Lock()
	defer c.mu.Unlock()
	calls := c.calls
	c.calls = nil
	return calls
}

// Script is Calls in their String form.
func (c *Conn) Script() []string { return strs(c.Calls()) }

// FailLaunches makes Launch return err (nil: succeed again).
func (c *Conn) FailLaunches(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.launchErr = err
}

func offerIDs(ids []mesos.OfferID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.Value
	}
	slices.Sort(out)
	return out
}

// Launch records a launch of tasks on offers.
func (c *Conn) Launch(offers []mesos.OfferID, tasks []mesos.TaskInfo) error {
	c.record(Call{Op: "launch", OfferIDs: offerIDs(offers), Tasks: slices.Clone(tasks)})
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.launchErr
}

// Decline records declined offers (sorted by id) and why.
func (c *Conn) Decline(offers []mesos.OfferID, why mesosconn.DeclineReason) error {
	c.record(Call{Op: "decline", OfferIDs: offerIDs(offers), Reason: why})
	return nil
}

// SetDemand records a REVIVE (on) or SUPPRESS (off).
func (c *Conn) SetDemand(on bool) { c.record(Call{Op: "demand", On: on}) }

// Kill records a KILL.
func (c *Conn) Kill(task mesos.TaskID, agent *mesos.AgentID) error {
	c.record(Call{Op: "kill", TaskID: task.Value, AgentID: agent.GetValue()})
	return nil
}

// Shutdown records a SHUTDOWN of an executor.
func (c *Conn) Shutdown(exec mesos.ExecutorID, agent mesos.AgentID) error {
	c.record(Call{Op: "shutdown", ExecutorID: exec.Value, AgentID: agent.Value})
	return nil
}

// Message records a framework message to an executor.
func (c *Conn) Message(agent mesos.AgentID, exec mesos.ExecutorID, data []byte) error {
	c.record(Call{Op: "message", ExecutorID: exec.Value, AgentID: agent.Value, Data: slices.Clone(data)})
	return nil
}

// Master is the fake master's info.
func (c *Conn) Master() mesos.MasterInfo { return c.master }

// FrameworkID is the fake framework's id.
func (c *Conn) FrameworkID() string { return c.frameworkID }

// Stop records the end of the connection (On: with TEARDOWN).
func (c *Conn) Stop(_ context.Context, teardown bool) error {
	c.record(Call{Op: "stop", On: teardown})
	return nil
}

// Event is one call the backend made on the driver.
type Event struct {
	Op          string // up, lost, status, abort
	ExecutorID  string
	Host        string
	Cores       int
	Reason      string // lost, abort
	CausedByApp bool
	Update      *backend.StatusUpdate
}

// String is the event in a script's words: "up E h0 3", "lost E",
// "status 1 FINISHED", "abort".
func (e Event) String() string {
	switch e.Op {
	case "up":
		return fmt.Sprintf("up %s %s %d", e.ExecutorID, e.Host, e.Cores)
	case "lost":
		return "lost " + e.ExecutorID
	case "status":
		return fmt.Sprintf("status %d %s", e.Update.TaskID, e.Update.State)
	}
	return e.Op
}

// Driver is a fake driver loop (backend.Driver) that records every call.
type Driver struct {
	mu     sync.Mutex
	events []Event
}

var _ backend.Driver = (*Driver)(nil)

func (d *Driver) record(e Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events = append(d.events, e)
}

// Events returns the calls recorded since the last Events, oldest first.
func (d *Driver) Events() []Event {
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.events
	d.events = nil
	return e
}

// Script is Events in their String form.
func (d *Driver) Script() []string { return strs(d.Events()) }

// ExecutorUp records an executor's capacity.
func (d *Driver) ExecutorUp(id, host string, cores int) {
	d.record(Event{Op: "up", ExecutorID: id, Host: host, Cores: cores})
}

// ExecutorLost records a lost executor.
func (d *Driver) ExecutorLost(id, reason string, causedByApp bool) {
	d.record(Event{Op: "lost", ExecutorID: id, Reason: reason, CausedByApp: causedByApp})
}

// StatusUpdate records a task's update.
func (d *Driver) StatusUpdate(u *backend.StatusUpdate) { d.record(Event{Op: "status", Update: u}) }

// Abort records an abort and its reason.
func (d *Driver) Abort(reason string) { d.record(Event{Op: "abort", Reason: reason}) }

func strs[T fmt.Stringer](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = x.String()
	}
	return out
}
