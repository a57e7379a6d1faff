package mesosconn

import (
	"fmt"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// send makes a call on the live subscription, with the framework id filled in.
func (c *Conn) send(call *scheduler.Call) error {
	c.mu.Lock()
	caller, id := c.caller, c.frameworkID
	c.mu.Unlock()
	if caller == nil {
		return fmt.Errorf("%w: cannot send %s", ErrNotSubscribed, call.Type)
	}
	call.FrameworkID = &mesos.FrameworkID{Value: id}
	resp, err := caller.Call(c.ctx, call)
	if resp != nil {
		resp.Close()
	}
	if err != nil {
		return fmt.Errorf("mesosconn: %s: %w", call.Type, err)
	}
	return nil
}

func filters(refuse time.Duration) *mesos.Filters {
	if refuse < 0 {
		return nil
	}
	return &mesos.Filters{RefuseSeconds: ptr(refuse.Seconds())}
}

// Accept applies operations to offers; resources left unused are declined with a filter of
// refuse (DefaultRefuse: the master's default). Tasks launched by LAUNCH and LAUNCH_GROUP
// operations are tracked for reconciliation. An ACCEPT of a rescinded offer still succeeds
// here: the master answers with TASK_LOST (TASK_DROPPED if PARTITION_AWARE) updates, passed to
// Handler.Update.
func (c *Conn) Accept(offerIDs []mesos.OfferID, ops []mesos.Offer_Operation, refuse time.Duration) error {
	launched := c.trackLaunches(ops)
	err := c.send(&scheduler.Call{
		Type:   scheduler.Call_ACCEPT,
		Accept: &scheduler.Call_Accept{OfferIDs: offerIDs, Operations: ops, Filters: filters(refuse)},
	})
	if err != nil {
		c.untrack(launched)
	}
	return err
}

// Launch launches tasks on offers (one LAUNCH operation).
func (c *Conn) Launch(offerIDs []mesos.OfferID, tasks []mesos.TaskInfo) error {
	return c.Accept(offerIDs, []mesos.Offer_Operation{calls.OpLaunch(tasks...)}, DefaultRefuse)
}

// LaunchGroup launches a task group on one executor (one LAUNCH_GROUP operation).
func (c *Conn) LaunchGroup(offerIDs []mesos.OfferID, executor mesos.ExecutorInfo, tasks []mesos.TaskInfo) error {
	return c.Accept(offerIDs, []mesos.Offer_Operation{calls.OpLaunchGroup(executor, tasks...)}, DefaultRefuse)
}

// Decline declines offers, filtering them for the refuse_seconds configured for why. An empty
// list sends nothing.
func (c *Conn) Decline(offerIDs []mesos.OfferID, why DeclineReason) error {
	if len(offerIDs) == 0 {
		return nil
	}
	refuse, ok := c.cfg.RefuseSeconds[why]
	if !ok {
		refuse = DefaultRefuse
	}
	c.log.Debugf("mesosconn: declining %d offer(s): %s (refuse %s)", len(offerIDs), why, refuse)
	c.metrics().OffersDeclined(strings.ReplaceAll(why.String(), " ", "_"), len(offerIDs))
	return c.send(&scheduler.Call{
		Type:    scheduler.Call_DECLINE,
		Decline: &scheduler.Call_Decline{OfferIDs: offerIDs, Filters: filters(refuse)},
	})
}

// SetDemand says whether tasks are waiting for resources. Only a change sends a call: SUPPRESS
// when demand goes off, REVIVE (which also clears offer filters) when it comes back. While
// demand is on and no offer arrives for ReviveInterval, the Conn revives again. The call is
// sent by a background goroutine: SetDemand never blocks on the network.
func (c *Conn) SetDemand(on bool) {
	c.mu.Lock()
	if c.demand == on {
		c.mu.Unlock()
		return
	}
	c.demand = on
	c.wantRevive, c.wantSuppress = on, !on
	c.mu.Unlock()
	c.kick()
}

// Demand reports the demand last set.
func (c *Conn) Demand() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.demand
}

// Kill asks the master to kill a task; agentID may be nil when unknown.
func (c *Conn) Kill(taskID mesos.TaskID, agentID *mesos.AgentID) error {
	return c.send(&scheduler.Call{Type: scheduler.Call_KILL, Kill: &scheduler.Call_Kill{TaskID: taskID, AgentID: agentID}})
}

// Shutdown asks the agent to shut an executor down.
func (c *Conn) Shutdown(executorID mesos.ExecutorID, agentID mesos.AgentID) error {
	return c.send(calls.Shutdown(executorID.Value, agentID.Value))
}

// Message sends a framework message to an executor (best effort).
func (c *Conn) Message(agentID mesos.AgentID, executorID mesos.ExecutorID, data []byte) error {
	return c.send(calls.Message(agentID.Value, executorID.Value, data))
}
