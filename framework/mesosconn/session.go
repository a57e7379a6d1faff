package mesosconn

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/apierrors"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/flint-mesos/flint/framework/mesosconn/detector"
)

// session is one SUBSCRIBE stream.
type session struct {
	active chan struct{} // an event arrived

	mu        sync.Mutex
	leader    detector.Leader // the leader the session follows
	masterID  string          // the master that answered SUBSCRIBED ("" before)
	heartbeat time.Duration
	reason    error // why the Conn closed the stream itself
}

// follows reports whether the session still talks to the leading master
// now. A leader change the detector reports is no reason to end a stream
// with the master it names: a ZooKeeper-backed Mesos master that restarts
// answers 307 while ZooKeeper still names its dead predecessor, then wins
// the election under a new id, and the driver's SUBSCRIBE, following the
// redirects, may reach it before the detector has caught up. So the
// session judges by the id of the master that answered SUBSCRIBED; before
// that answer it cannot judge, and session checks again when it arrives.
func (s *session) follows(now detector.Leader) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case now.Same(s.leader):
		return true
	case s.masterID == "":
		return true // judged when SUBSCRIBED arrives
	case now.ID != "" && now.ID == s.masterID:
		s.leader = now
		return true
	}
	return false
}

func (s *session) subscribedTo(masterID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.masterID = masterID
}

func (s *session) followed() detector.Leader {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leader
}

func (s *session) window(missed int) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return time.Duration(missed) * s.heartbeat
}

func (s *session) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reason == nil {
		s.reason = err
	}
}

func (s *session) why() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reason
}

// newCaller returns a fresh mesos-go scheduler caller for one master: httpsched tracks the
// Mesos-Stream-Id, follows 307 redirects for SUBSCRIBE and drops the subscription on 403.
func (c *Conn) newCaller(endpoint string) calls.Caller {
	cl := httpcli.New(httpcli.Endpoint(endpoint), httpcli.Codec(c.codec), httpcli.Do(c.do))
	// Without a candidate selector httpsched retries every failed call against the same
	// endpoint with its own wall-clock backoff; returning "" makes it report errors at once,
	// so that re-subscription runs on the Conn's clock, backoff and detector. 307 redirects
	// from a non-leading master are still followed.
	return httpsched.NewCaller(cl, httpsched.EndpointCandidates(func() string { return "" }))
}

// session subscribes to l and handles the stream until it ends; it returns why.
func (c *Conn) session(l detector.Leader) error {
	endpoint := c.scheme + "://" + l.Addr + "/api/v1/scheduler"
	caller := c.newCaller(endpoint)
	c.mu.Lock()
	id := c.frameworkID
	c.mu.Unlock()
	call := calls.Subscribe(c.cfg.frameworkInfo(id))

	ctx, cancel := context.WithCancel(c.ctx)
	resp, err := caller.Call(ctx, call)
	if err != nil {
		cancel()
		if resp != nil {
			resp.Close()
		}
		switch {
		case apierrors.CodeNotAuthenticated.Matches(err):
			return fmt.Errorf("%w by %s for principal %q: %v", ErrAuth, endpoint, c.cfg.Principal, err)
		case apierrors.CodeMalformedRequest.Matches(err):
			return fmt.Errorf("%w: SUBSCRIBE to %s: %v", ErrRefused, endpoint, err)
		}
		return fmt.Errorf("mesosconn: SUBSCRIBE to %s: %w", endpoint, err)
	}
	s := &session{leader: l, active: make(chan struct{}, 1), heartbeat: c.cfg.DefaultHeartbeat}
	var wd sync.WaitGroup
	wd.Add(1)
	go func() {
		defer wd.Done()
		c.watchdog(ctx, s, resp)
	}()
	defer func() {
		cancel()
		resp.Close()
		wd.Wait()
	}()

	subscribed := false
	for {
		var e scheduler.Event
		if err := resp.Decode(&e); err != nil {
			if r := s.why(); r != nil {
				err = r
			} else if err == io.EOF {
				err = fmt.Errorf("mesosconn: %s closed the event stream", endpoint)
			} else {
				err = fmt.Errorf("mesosconn: event stream from %s: %w", endpoint, err)
			}
			c.dropCaller(caller)
			if subscribed && !c.isStopping() && c.ctx.Err() == nil {
				c.h.Disconnected(err)
			}
			return err
		}
		if e.GetType() == scheduler.Event_SUBSCRIBED {
			if err := c.checkLeader(s, e.GetSubscribed().GetMasterInfo().GetID()); err != nil {
				c.dropCaller(caller)
				return err
			}
			subscribed = true
			if hb := e.GetSubscribed().GetHeartbeatIntervalSeconds(); hb > 0 {
				s.mu.Lock()
				s.heartbeat = time.Duration(hb * float64(time.Second))
				s.mu.Unlock()
			}
		}
		notify(s.active)
		if err := c.handle(caller, &e); err != nil {
			c.dropCaller(caller)
			return err
		}
	}
}

// watchdog closes the stream when it goes silent for MissedHeartbeats intervals or the leader
// changes.
func (c *Conn) watchdog(ctx context.Context, s *session, stream io.Closer) {
	for {
		window := s.window(c.cfg.MissedHeartbeats)
		select {
		case <-ctx.Done():
			return
		case <-s.active:
		case <-c.clock.After(window):
			s.fail(fmt.Errorf("%w (%s from %s)", ErrHeartbeatTimeout, window, s.followed().Addr))
			stream.Close()
			return
		case <-c.leaderCh:
			c.mu.Lock()
			now := c.leader
			c.mu.Unlock()
			if was := s.followed(); !s.follows(now) {
				s.fail(fmt.Errorf("%w: %s (%s) → %q (%s)", ErrLeaderChanged, was.Addr, was.ID, now.Addr, now.ID))
				stream.Close()
				notify(c.leaderCh) // let run() skip its backoff for the new leader
				return
			}
		}
	}
}

// checkLeader records which master answered SUBSCRIBED and ends the
// session when another master leads by now.
func (c *Conn) checkLeader(s *session, masterID string) error {
	s.subscribedTo(masterID)
	c.mu.Lock()
	now := c.leader
	c.mu.Unlock()
	if !s.follows(now) {
		notify(c.leaderCh) // let run() skip its backoff for the new leader
		return fmt.Errorf("%w: subscribed to master %s, but %s (%s) leads now", ErrLeaderChanged, masterID, now.Addr, now.ID)
	}
	return nil
}

func (c *Conn) dropCaller(caller calls.Caller) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.caller == caller {
		c.caller = nil
	}
}

// handle dispatches one event to the Handler; it returns an error only to end the session.
func (c *Conn) handle(caller calls.Caller, e *scheduler.Event) error {
	if c.isStopping() {
		return c.handleStopping(caller, e)
	}
	switch e.GetType() {
	case scheduler.Event_SUBSCRIBED:
		c.subscribed(caller, e.GetSubscribed())
	case scheduler.Event_OFFERS:
		c.mu.Lock()
		c.lastOffer = c.clock.Now()
		c.mu.Unlock()
		c.metrics().OffersReceived(len(e.GetOffers().GetOffers()))
		c.h.Offers(e.GetOffers().GetOffers())
	case scheduler.Event_RESCIND:
		c.h.Rescinded(e.GetRescind().OfferID)
	case scheduler.Event_UPDATE:
		st := e.GetUpdate().Status
		c.taskUpdate(st)
		c.h.Update(st)
		if len(st.UUID) > 0 {
			c.ack(st)
		}
	case scheduler.Event_MESSAGE:
		m := e.GetMessage()
		c.h.Message(m.AgentID, m.ExecutorID, m.Data)
	case scheduler.Event_FAILURE:
		f := e.GetFailure()
		switch {
		case f.ExecutorID != nil:
			var agent mesos.AgentID
			if f.AgentID != nil {
				agent = *f.AgentID
			}
			c.h.ExecutorLost(agent, *f.ExecutorID, int(f.GetStatus()))
		case f.AgentID != nil:
			c.h.AgentLost(*f.AgentID)
		}
	case scheduler.Event_ERROR:
		return fmt.Errorf("%w: %s", ErrRefused, e.GetError().GetMessage())
	case scheduler.Event_HEARTBEAT:
	default:
		c.log.Debugf("mesosconn: ignoring %s event", e.GetType())
	}
	return nil
}

// handleStopping handles the events of a subscription Stop made to tear
// the framework down, without the Handler: the TEARDOWN about to be sent
// returns the offers and ends the tasks; updates are acknowledged.
func (c *Conn) handleStopping(caller calls.Caller, e *scheduler.Event) error {
	switch e.GetType() {
	case scheduler.Event_SUBSCRIBED:
		c.subscribed(caller, e.GetSubscribed())
	case scheduler.Event_UPDATE:
		if st := e.GetUpdate().Status; len(st.UUID) > 0 {
			c.ack(st)
		}
	case scheduler.Event_ERROR:
		return fmt.Errorf("%w: %s", ErrRefused, e.GetError().GetMessage())
	}
	return nil
}

func (c *Conn) subscribed(caller calls.Caller, sub *scheduler.Event_Subscribed) {
	now := c.clock.Now()
	id := sub.FrameworkID.GetValue()
	c.mu.Lock()
	re := c.subscribedOnce
	c.subscribedOnce = true
	c.caller, c.frameworkID, c.lastErr = caller, id, nil
	if sub.MasterInfo != nil {
		c.master = *sub.MasterInfo
	}
	c.lastOffer, c.lastRevive = now, now
	c.nextPeriodic = now.Add(c.cfg.ReconcileInterval)
	c.wantRevive, c.wantSuppress = false, !c.demand // a new subscription starts unsuppressed
	c.markPendingLocked(now)
	c.saidRecovering = false
	master, stopping := c.master, c.stopping
	c.mu.Unlock()
	c.backoff.Reset()
	notify(c.subCh)
	if stopping {
		c.log.Infof("mesosconn: re-subscribed to master %s as framework %s to tear it down", master.GetID(), id)
		return
	}
	c.log.Debugf("mesosconn: subscribed as framework %s to master %s (resubscribed: %v)", id, master.GetID(), re)
	if re {
		c.metrics().Resubscribed()
	}
	c.h.Subscribed(id, master, re)
	if err := c.send(calls.Reconcile()); err != nil {
		c.log.WithError(err).Warn("mesosconn: implicit reconciliation")
	}
	c.kick()
	if !re {
		c.first <- nil
	}
}

// ack acknowledges a status update that carries a uuid.
func (c *Conn) ack(st mesos.TaskStatus) {
	if st.AgentID == nil {
		c.log.Warnf("mesosconn: cannot acknowledge update of task %s: no agent id", st.TaskID.Value)
		return
	}
	if err := c.send(calls.Acknowledge(st.AgentID.Value, st.TaskID.Value, st.UUID)); err != nil {
		if c.isStopping() || c.ctx.Err() != nil {
			// Updates racing our TEARDOWN: the master has forgotten the
			// framework ("Framework cannot be found") or the call was
			// cancelled. Nothing is lost; nothing to say.
			c.log.WithError(err).Debugf("mesosconn: acknowledging %s of task %s while stopping", st.State, st.TaskID.Value)
			return
		}
		c.log.WithError(err).Warnf("mesosconn: acknowledging %s of task %s (the master will resend it)", st.State, st.TaskID.Value)
	}
}
