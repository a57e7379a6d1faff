package agent

import (
	"net/http"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/executor"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/mesoshttp"
	"github.com/flint-mesos/flint/internal/mailbox"
)

// maxCallBody caps an executor call body (a SUBSCRIBE carries task infos).
const maxCallBody = 16 << 20

// subscription is an executor's open event stream: an unbounded queue
// (internal/mailbox) drained by the SUBSCRIBE handler, so pushing never
// blocks the agent.
type subscription struct {
	events *mailbox.Mailbox[*executor.Event]
}

func newSubscription() *subscription {
	return &subscription{events: mailbox.New[*executor.Event]()}
}

// push queues an event (dropped once the stream is closed).
func (s *subscription) push(e *executor.Event) { s.events.Put(e) }

// close ends the stream after the queued events are written.
func (s *subscription) close() { s.events.End() }

// pop returns the queued events and whether the stream ends after them.
func (s *subscription) pop() ([]*executor.Event, bool) { return s.events.TakeEnded(nil) }

// ready receives when events were queued or the stream closed.
func (s *subscription) ready() <-chan struct{} { return s.events.Wake() }

// Handler serves the agent's HTTP API: the executor API and sandbox files.
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/executor", a.serveExecutor)
	mux.HandleFunc("/files/read", a.serveFilesRead)
	mux.HandleFunc("/files/read.json", a.serveFilesRead)
	mux.HandleFunc("/files/browse", a.serveFilesBrowse)
	mux.HandleFunc("/files/browse.json", a.serveFilesBrowse)
	mux.HandleFunc("/state", a.serveState)
	mux.HandleFunc("/slave(1)/state", a.serveState)
	return mux
}

func (a *Agent) serveExecutor(w http.ResponseWriter, r *http.Request) {
	var call executor.Call
	mt, ok := mesoshttp.DecodeRequest(w, r, maxCallBody, &call)
	if !ok {
		return
	}
	if msg := validateCall(&call); msg != "" {
		mesoshttp.BadRequest(w, msg)
		return
	}
	if call.Type == executor.Call_UNKNOWN {
		mesoshttp.NotImplemented(w, "Received 'UNKNOWN' call")
		return
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		mesoshttp.Error(w, http.StatusServiceUnavailable, "Agent is shutting down")
		return
	}
	fw := a.frameworks[call.FrameworkID.Value]
	if fw == nil {
		a.mu.Unlock()
		mesoshttp.BadRequest(w, "Framework cannot be found")
		return
	}
	ex := fw.executors[call.ExecutorID.Value]
	if ex == nil || ex.command != nil || ex.dflt != nil {
		a.mu.Unlock()
		mesoshttp.BadRequest(w, "Executor cannot be found")
		return
	}
	if call.Type == executor.Call_SUBSCRIBE {
		a.subscribe(w, r, mt, ex, call.Subscribe) // unlocks
		return
	}
	if ex.state == exLaunching {
		a.mu.Unlock()
		mesoshttp.Forbidden(w, "Executor is not subscribed")
		return
	}
	switch call.Type {
	case executor.Call_UPDATE:
		a.executorUpdate(w, ex, call.Update.Status) // unlocks
	case executor.Call_MESSAGE:
		a.mu.Unlock()
		a.send(link.AgentMessage{ExecutorMessage: &link.ExecutorMessage{FrameworkID: call.FrameworkID, ExecutorID: call.ExecutorID, Data: call.Message.Data}})
		mesoshttp.Accepted(w)
	case executor.Call_HEARTBEAT:
		a.mu.Unlock()
		mesoshttp.Accepted(w)
	default:
		a.mu.Unlock()
		mesoshttp.NotImplemented(w, "Unsupported call type "+call.Type.String())
	}
}

// validateCall mirrors Mesos' executor call validation; "" means valid.
func validateCall(c *executor.Call) string {
	if c.ExecutorID.Value == "" {
		return "Expecting 'executor_id' to be present"
	}
	if c.FrameworkID.Value == "" {
		return "Expecting 'framework_id' to be present"
	}
	switch c.Type {
	case executor.Call_SUBSCRIBE:
		if c.Subscribe == nil {
			return "Expecting 'subscribe' to be present"
		}
	case executor.Call_UPDATE:
		if c.Update == nil {
			return "Expecting 'update' to be present"
		}
		st := c.Update.Status
		switch {
		case len(st.UUID) == 0:
			return "Expecting 'uuid' to be present"
		case len(st.UUID) != 16:
			return "Invalid 'uuid': expecting 16 bytes"
		case st.State == nil:
			return "Expecting 'state' to be present"
		case *st.State == mesos.TASK_STAGING:
			return "Received TASK_STAGING from executor"
		case st.Source == nil || *st.Source != mesos.SOURCE_EXECUTOR:
			return "Received wrong 'source' in status update: expecting SOURCE_EXECUTOR"
		case st.ExecutorID != nil && st.ExecutorID.Value != c.ExecutorID.Value:
			return "ExecutorID in Call: " + c.ExecutorID.Value + " does not match ExecutorID in TaskStatus: " + st.ExecutorID.Value
		}
	case executor.Call_MESSAGE:
		if c.Message == nil {
			return "Expecting 'message' to be present"
		}
	}
	return ""
}

func (a *Agent) executorUpdate(w http.ResponseWriter, ex *execRun, st mesos.TaskStatus) {
	t := ex.tasks[st.TaskID.Value]
	if t == nil {
		a.mu.Unlock()
		mesoshttp.BadRequest(w, "Task "+st.TaskID.Value+" is not known to executor "+ex.info.ExecutorID.Value)
		return
	}
	st.ExecutorID = &ex.info.ExecutorID
	if st.Timestamp == nil {
		st.Timestamp = now()
	}
	dup, err := a.updateLocked(ex.fw, &ex.info.ExecutorID, st)
	accepted := err == nil || dup
	if accepted {
		a.checkpointLocked(ex)
	}
	sub, durable, mark := ex.sub, ex.fw.info.GetCheckpoint(), a.ckpt.mark()
	a.mu.Unlock()
	if accepted && sub != nil {
		if durable {
			// As Mesos' agent, acknowledge a checkpointing framework's update
			// only once it is checkpointed (a restarted agent resends it).
			a.ckpt.wait(mark)
		}
		sub.push(&executor.Event{Type: executor.Event_ACKNOWLEDGED, Acknowledged: &executor.Event_Acknowledged{TaskID: st.TaskID, UUID: st.UUID}})
	}
	if err != nil {
		mesoshttp.BadRequest(w, err.Error())
		return
	}
	mesoshttp.Accepted(w)
}

// subscribe answers SUBSCRIBE with the event stream: SUBSCRIBED, then a
// LAUNCH per queued task; re-subscriptions resend their unacknowledged
// updates and tasks. Called with a.mu held; unlocks it.
func (a *Agent) subscribe(w http.ResponseWriter, r *http.Request, _ mesoshttp.MediaType, ex *execRun, s *executor.Call_Subscribe) {
	mt, ok := mesoshttp.Negotiate(r.Header.Get("Accept"))
	if !ok {
		a.mu.Unlock()
		mesoshttp.NotAcceptable(w)
		return
	}
	if ex.state == exTerminated {
		a.mu.Unlock()
		mesoshttp.BadRequest(w, "Executor cannot be found")
		return
	}
	if ex.sub != nil {
		ex.sub.close() // a newer subscription replaces the old stream
	}
	sub := newSubscription()
	ex.sub = sub
	if ex.regTimer != nil {
		ex.regTimer.Stop()
		ex.regTimer = nil
	}
	for _, ti := range s.UnacknowledgedTasks {
		if ex.tasks[ti.TaskID.Value] == nil {
			ex.tasks[ti.TaskID.Value] = &task{info: ti, state: mesos.TASK_STAGING, launched: true}
		}
	}
	for _, u := range s.UnacknowledgedUpdates {
		st := u.Status
		if len(st.UUID) != 16 || st.State == nil || ex.tasks[st.TaskID.Value] == nil {
			continue
		}
		st.ExecutorID = &ex.info.ExecutorID
		if dup, err := a.updateLocked(ex.fw, &ex.info.ExecutorID, st); err == nil || dup {
			sub.push(&executor.Event{Type: executor.Event_ACKNOWLEDGED, Acknowledged: &executor.Event_Acknowledged{TaskID: st.TaskID, UUID: st.UUID}})
		}
	}
	agentInfo := mesos.AgentInfo{ID: &mesos.AgentID{Value: a.agentID}, Hostname: a.cfg.Hostname, Resources: a.resources, Attributes: a.attributes}
	first := &executor.Event{Type: executor.Event_SUBSCRIBED, Subscribed: &executor.Event_Subscribed{
		ExecutorInfo: ex.info, FrameworkInfo: ex.fw.info, AgentInfo: agentInfo, ContainerID: &mesos.ContainerID{Value: ex.containerID},
	}}
	if ex.state == exTerminating {
		sub.push(&executor.Event{Type: executor.Event_SHUTDOWN})
	} else {
		ex.state = exRunning
		a.flushQueuedLocked(ex)
	}
	a.checkpointLocked(ex)
	durable, mark := ex.fw.info.GetCheckpoint(), a.ckpt.mark()
	a.mu.Unlock()
	if durable {
		a.ckpt.wait(mark) // the re-sent updates it acknowledges are checkpointed
	}

	stream := mesoshttp.StartStream(w, mt, nil)
	defer stream.Close()
	if stream.Send(first) != nil {
		return
	}
	for {
		events, closed := sub.pop()
		for _, e := range events {
			if stream.Send(e) != nil {
				a.disconnected(ex, sub)
				return
			}
		}
		if closed {
			return
		}
		select {
		case <-sub.ready():
		case <-r.Context().Done():
			a.disconnected(ex, sub)
			return
		}
	}
}

// disconnected forgets a broken stream. As in Mesos, the agent does not act
// on it: an executor of a framework without checkpointing is expected to
// exit on its own when it loses its subscription (docs/executor-http-api.md,
// "Disconnections"), and its tasks end with its process — TASK_FAILED,
// REASON_EXECUTOR_TERMINATED — not TASK_LOST as a shutdown would make them.
func (a *Agent) disconnected(ex *execRun, sub *subscription) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ex.sub != sub {
		return
	}
	sub.close()
	ex.sub = nil
	a.log.WithField("executor", ex.info.ExecutorID.Value).Debug("agent: executor's subscription closed")
}
