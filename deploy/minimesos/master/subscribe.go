package master

import (
	"fmt"
	"net/http"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/allocator"
	"github.com/flint-mesos/flint/deploy/minimesos/mesoshttp"
	"github.com/flint-mesos/flint/internal/uuid"
)

func errorEvent(msg string) *scheduler.Event {
	return &scheduler.Event{Type: scheduler.Event_ERROR, Error: &scheduler.Event_Error{Message: msg}}
}

// subscribe answers SUBSCRIBE: 406/400 before the stream, then 200 and a
// RecordIO stream carrying SUBSCRIBED and HEARTBEAT, or one ERROR.
func (m *Master) subscribe(w http.ResponseWriter, r *http.Request, _ mesoshttp.MediaType, principal string, call *scheduler.Call) {
	out, ok := mesoshttp.Negotiate(r.Header.Get("Accept"))
	if !ok {
		mesoshttp.NotAcceptable(w)
		return
	}
	if r.Header.Get("Mesos-Stream-Id") != "" {
		mesoshttp.BadRequest(w, "Subscribe calls should not include the 'Mesos-Stream-Id' header")
		return
	}
	fi := call.Subscribe.FrameworkInfo
	if principal != "" && fi.GetPrincipal() != principal {
		mesoshttp.BadRequest(w, "Authenticated principal '"+principal+"' does not match principal '"+
			fi.GetPrincipal()+"' set in `FrameworkInfo`")
		return
	}
	sub := newSubscription(uuid.NewString())
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		mesoshttp.Error(w, http.StatusServiceUnavailable, "Master is shutting down")
		return
	}
	m.streams[sub] = struct{}{}
	m.wg.Add(1)
	defer m.wg.Done()
	f := m.attach(sub, fi, call.Subscribe.SuppressedRoles)
	m.mu.Unlock()

	stream := mesoshttp.StartStream(w, out, map[string]string{"Mesos-Stream-Id": sub.streamID})
	gone := m.pump(r, stream, sub)

	m.mu.Lock()
	delete(m.streams, sub)
	if gone && f != nil {
		m.streamGone(f, sub)
	}
	m.mu.Unlock()
}

// pump writes queued events until the master ends the stream (false) or
// the client goes away (true).
func (m *Master) pump(r *http.Request, stream *mesoshttp.Stream, sub *subscription) (gone bool) {
	defer stream.Close()
	for {
		evs, ending := sub.take()
		for _, e := range evs {
			if err := stream.Send(e); err != nil {
				return true
			}
		}
		if ending {
			return false
		}
		select {
		case <-sub.notify():
		case <-r.Context().Done():
			return true
		}
	}
}

// attach validates a subscription and binds it to a new or existing
// framework, queueing SUBSCRIBED and HEARTBEAT, or an ERROR and the end.
// Callers hold m.mu.
func (m *Master) attach(sub *subscription, fi *mesos.FrameworkInfo, suppressed []string) *framework {
	fail := func(msg string) *framework {
		m.log.WithField("framework", fi.GetName()).Warn("subscription refused: " + msg)
		sub.end(errorEvent(msg))
		return nil
	}
	if err := validateFrameworkInfo(fi); err != nil {
		return fail(err.Error())
	}
	for _, r := range suppressed {
		if err := validateRole(r); err != nil {
			return fail(err.Error())
		}
	}
	now := m.cfg.Clock.Now()
	var f *framework
	if id := fi.GetID().GetValue(); id != "" {
		if m.removedFw.has(id) {
			return fail("Framework has been removed")
		}
		f = m.fws[id]
		if f != nil && !f.recoveredOnly && f.info.GetPrincipal() != fi.GetPrincipal() {
			return fail("Changing framework's principal is not allowed.")
		}
	}
	if f == nil {
		f = m.addFramework(fi, now)
	} else {
		m.failover(f, fi, now)
	}
	f.sub = sub
	f.active = true
	m.alloc.ActivateFramework(f.id)
	// As Mesos: the subscription's suppressed_roles are the framework's
	// suppressed roles from now on, also when it fails over (a previous
	// driver's SUPPRESS does not outlive it).
	m.alloc.SetSuppressed(f.id, suppressed)
	fid := mesos.FrameworkID{Value: f.id}
	hb := m.cfg.HeartbeatInterval.Seconds()
	mi := m.info
	sub.push(&scheduler.Event{Type: scheduler.Event_SUBSCRIBED, Subscribed: &scheduler.Event_Subscribed{
		FrameworkID: &fid, HeartbeatIntervalSeconds: &hb, MasterInfo: &mi,
	}})
	sub.push(&scheduler.Event{Type: scheduler.Event_HEARTBEAT})
	m.log.WithFields(logrus.Fields{"framework": f.id, "name": f.info.Name, "stream": sub.streamID}).Info("framework subscribed")
	m.generateOffersLocked()
	return f
}

// addFramework registers a new framework, or one with an id unknown to
// this master (re-registering after a master restart). Callers hold m.mu.
func (m *Master) addFramework(fi *mesos.FrameworkInfo, now time.Time) *framework {
	info := *fi
	if info.ID == nil || info.ID.Value == "" {
		info.ID = &mesos.FrameworkID{Value: fmt.Sprintf("%s-%04d", m.cfg.ID, m.nextFw)}
		m.nextFw++
	}
	f := m.newFramework(info, now)
	m.alloc.AddFramework(allocInfo(f), true, nil)
	m.inc("master/frameworks_registered", 1)
	return f
}

func (m *Master) newFramework(info mesos.FrameworkInfo, now time.Time) *framework {
	f := &framework{
		id: info.ID.Value, info: info, caps: capsOf(&info),
		tasks: map[string]*task{}, unreachableTasks: map[string]*task{},
		executors: map[string]map[string]*mesos.ExecutorInfo{},
		offers:    map[string]*offer{}, registered: now,
	}
	m.fws[f.id] = f
	return f
}

func allocInfo(f *framework) allocator.FrameworkInfo {
	return allocator.FrameworkInfo{ID: f.id, Roles: frameworkRoles(&f.info), MultiRole: f.caps.multiRole, GPUAware: f.caps.gpu}
}

// failover binds a known framework to a new subscription: the old stream
// gets "Framework failed over", offers are recovered, the failover timer
// cancelled, and the new FrameworkInfo applied (user and checkpoint keep
// their old values). Callers hold m.mu.
func (m *Master) failover(f *framework, fi *mesos.FrameworkInfo, now time.Time) {
	if f.sub != nil {
		f.sub.end(errorEvent("Framework failed over"))
		f.sub = nil
	}
	m.cancel(f.failover)
	f.failover = nil
	m.removeOffers(f, false, now)
	info := *fi
	info.ID = &mesos.FrameworkID{Value: f.id}
	if !f.recoveredOnly {
		info.User = f.info.User
		info.Checkpoint = f.info.Checkpoint
	}
	f.recoveredOnly = false
	f.info = info
	f.caps = capsOf(&info)
	f.reregistered = now
	m.alloc.UpdateFramework(allocInfo(f))
	m.broadcastFramework(f)
}

// streamGone handles a subscriber that went away: deactivate, recover
// offers, and remove the framework after its failover_timeout.
// Callers hold m.mu.
func (m *Master) streamGone(f *framework, sub *subscription) {
	if f.sub != sub || f.removed {
		return
	}
	now := m.cfg.Clock.Now()
	f.sub = nil
	f.active = false
	f.unregistered = now
	m.alloc.DeactivateFramework(f.id)
	m.removeOffers(f, false, now)
	timeout := time.Duration(f.info.GetFailoverTimeout() * float64(time.Second))
	m.log.WithFields(logrus.Fields{"framework": f.id, "failover_timeout": timeout}).Info("framework disconnected")
	if timeout <= 0 {
		m.removeFramework(f, now)
		return
	}
	f.failover = m.after(timeout, func(now time.Time) {
		f.failover = nil
		if f.sub == nil && !f.removed {
			m.log.WithField("framework", f.id).Info("framework failover timeout expired")
			m.removeFramework(f, now)
		}
	})
}

// removeFramework removes a framework (TEARDOWN, failover timeout): its
// stream ends, its offers are recovered, its executors shut down on every
// agent and its live tasks become TASK_KILLED (REASON_FRAMEWORK_REMOVED).
// Callers hold m.mu.
func (m *Master) removeFramework(f *framework, now time.Time) {
	if f.removed {
		return
	}
	f.removed = true
	if f.sub != nil {
		f.sub.end(nil)
		f.sub = nil
	}
	m.cancel(f.failover)
	m.removeOffers(f, false, now)
	freed := map[string]bool{}
	for _, t := range f.tasks {
		if !isTerminal(t.state()) {
			st := m.masterStatus(t, mesos.TASK_KILLED, mesos.REASON_FRAMEWORK_REMOVED, "Framework "+f.id+" removed")
			if m.setLatest(t, st) {
				freed[t.t.AgentID.Value] = true
			}
		}
		m.completeTask(f, t)
	}
	// Every connected agent hears of it, as Mesos sends
	// ShutdownFrameworkMessage to every registered agent: also those where
	// its executors have already ended (a finished coarse-mode job), which
	// may still hold its record and unacknowledged updates. Agents
	// disconnected now learn it when they re-register with it or resend
	// one of its updates.
	for _, id := range sortedKeys(m.agents) {
		if a := m.agents[id]; a.connected {
			m.deliver(a, linkShutdownFramework(f.id))
		}
	}
	f.executors = map[string]map[string]*mesos.ExecutorInfo{}
	m.alloc.RemoveFramework(f.id)
	delete(m.fws, f.id)
	m.removedFw.add(f.id)
	f.unregistered = now
	m.completed = append(m.completed, f)
	if over := len(m.completed) - m.cfg.MaxCompletedFrameworks; over > 0 {
		m.completed = append([]*framework(nil), m.completed[over:]...)
	}
	m.inc("master/frameworks_removed", 1)
	m.log.WithField("framework", f.id).Info("framework removed")
	for _, id := range sortedKeys(freed) {
		m.released(id)
	}
}

// updateFramework applies UPDATE_FRAMEWORK. Callers hold m.mu.
func (m *Master) updateFramework(f *framework, principal string, u *scheduler.Call_UpdateFramework) answer {
	fi := u.FrameworkInfo
	if err := validateFrameworkInfo(&fi); err != nil {
		return badRequest(err.Error())
	}
	if fi.GetPrincipal() != f.info.GetPrincipal() {
		return badRequest("Changing framework's principal is not allowed.")
	}
	for _, r := range u.SuppressedRoles {
		if err := validateRole(r); err != nil {
			return badRequest(err.Error())
		}
	}
	fi.User, fi.Checkpoint = f.info.User, f.info.Checkpoint
	f.info = fi
	f.caps = capsOf(&fi)
	m.alloc.UpdateFramework(allocInfo(f))
	roles := frameworkRoles(&fi)
	sup := map[string]bool{}
	for _, r := range u.SuppressedRoles {
		sup[r] = true
	}
	var on, off []string
	for _, r := range roles {
		if sup[r] {
			off = append(off, r)
		} else {
			on = append(on, r)
		}
	}
	if len(off) > 0 {
		m.alloc.Suppress(f.id, off)
	}
	if len(on) > 0 {
		m.alloc.Revive(f.id, on)
	}
	m.broadcastFramework(f)
	return answer{}
}

// broadcastFramework tells the agents running something of f about its
// new FrameworkInfo. Callers hold m.mu.
func (m *Master) broadcastFramework(f *framework) {
	for _, a := range m.agents {
		if a.connected && m.frameworkOnAgent(f, a.id) {
			m.deliver(a, linkUpdateFramework(f.info))
		}
	}
}

func (m *Master) frameworkOnAgent(f *framework, agentID string) bool {
	if len(f.executors[agentID]) > 0 {
		return true
	}
	for _, t := range f.tasks {
		if t.t.AgentID.Value == agentID {
			return true
		}
	}
	return false
}
