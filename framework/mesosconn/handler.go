package mesosconn

import (
	"net"
	"strconv"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Handler receives the subscription's events. The Conn calls its methods one at a time from
// one goroutine, in stream order. They may call the Conn's call methods (Accept, Decline, …)
// but must not call Stop.
type Handler interface {
	// Subscribed reports a SUBSCRIBED event; resubscribed is false only for the Conn's first.
	Subscribed(frameworkID string, master mesos.MasterInfo, resubscribed bool)
	// Offers hands over new offers; answer each with Conn.Accept, Launch or Decline.
	Offers(offers []mesos.Offer)
	// Rescinded says an offer is void; using it yields TASK_LOST/DROPPED updates.
	Rescinded(offerID mesos.OfferID)
	// Update reports a task status. The Conn acknowledges it (when it carries a uuid) after
	// Update returns.
	Update(status mesos.TaskStatus)
	// AgentLost reports a FAILURE event without an executor: the agent is gone.
	AgentLost(agentID mesos.AgentID)
	// ExecutorLost reports a FAILURE event for an executor with its exit status.
	ExecutorLost(agentID mesos.AgentID, executorID mesos.ExecutorID, status int)
	// Message delivers an executor's framework message.
	Message(agentID mesos.AgentID, executorID mesos.ExecutorID, data []byte)
	// Disconnected reports the loss of a subscribed stream; the Conn is re-subscribing.
	Disconnected(err error)
	// Aborted reports that the Conn gave up for good (an ERROR event such as "framework
	// removed", or authentication refused). The Conn stops its goroutines; call Stop anyway.
	Aborted(err error)
}

// DeclineReason says why offers are declined; it selects the refuse_seconds filter.
type DeclineReason int

const (
	// DeclineUnfit: the offer does not fit what is pending now (master default filter).
	DeclineUnfit DeclineReason = iota
	// DeclineNoDemand: nothing is pending (flint.mesos.rejectOfferDuration).
	DeclineNoDemand
	// DeclineUnmetConstraint: the offer fails flint.mesos.constraints
	// (flint.mesos.rejectOfferDurationForUnmetConstraints).
	DeclineUnmetConstraint
	// DeclineReachedMaxCores: flint.cores.max is reached
	// (flint.mesos.rejectOfferDurationForReachedMaxCores).
	DeclineReachedMaxCores
	// DeclineShuttingDown: the driver is stopping.
	DeclineShuttingDown
)

func (r DeclineReason) String() string {
	switch r {
	case DeclineUnfit:
		return "unfit"
	case DeclineNoDemand:
		return "no demand"
	case DeclineUnmetConstraint:
		return "unmet constraints"
	case DeclineReachedMaxCores:
		return "reached max cores"
	case DeclineShuttingDown:
		return "shutting down"
	}
	return "unknown"
}

// HandlerFuncs is a Handler made of optional functions; nil ones ignore their event.
type HandlerFuncs struct {
	OnSubscribed   func(frameworkID string, master mesos.MasterInfo, resubscribed bool)
	OnOffers       func(offers []mesos.Offer)
	OnRescinded    func(offerID mesos.OfferID)
	OnUpdate       func(status mesos.TaskStatus)
	OnAgentLost    func(agentID mesos.AgentID)
	OnExecutorLost func(agentID mesos.AgentID, executorID mesos.ExecutorID, status int)
	OnMessage      func(agentID mesos.AgentID, executorID mesos.ExecutorID, data []byte)
	OnDisconnected func(err error)
	OnAborted      func(err error)
}

var _ Handler = HandlerFuncs{}

// Subscribed calls OnSubscribed.
func (h HandlerFuncs) Subscribed(id string, m mesos.MasterInfo, re bool) {
	if h.OnSubscribed != nil {
		h.OnSubscribed(id, m, re)
	}
}

// Offers calls OnOffers.
func (h HandlerFuncs) Offers(o []mesos.Offer) {
	if h.OnOffers != nil {
		h.OnOffers(o)
	}
}

// Rescinded calls OnRescinded.
func (h HandlerFuncs) Rescinded(id mesos.OfferID) {
	if h.OnRescinded != nil {
		h.OnRescinded(id)
	}
}

// Update calls OnUpdate.
func (h HandlerFuncs) Update(s mesos.TaskStatus) {
	if h.OnUpdate != nil {
		h.OnUpdate(s)
	}
}

// AgentLost calls OnAgentLost.
func (h HandlerFuncs) AgentLost(a mesos.AgentID) {
	if h.OnAgentLost != nil {
		h.OnAgentLost(a)
	}
}

// ExecutorLost calls OnExecutorLost.
func (h HandlerFuncs) ExecutorLost(a mesos.AgentID, e mesos.ExecutorID, status int) {
	if h.OnExecutorLost != nil {
		h.OnExecutorLost(a, e, status)
	}
}

// Message calls OnMessage.
func (h HandlerFuncs) Message(a mesos.AgentID, e mesos.ExecutorID, data []byte) {
	if h.OnMessage != nil {
		h.OnMessage(a, e, data)
	}
}

// Disconnected calls OnDisconnected.
func (h HandlerFuncs) Disconnected(err error) {
	if h.OnDisconnected != nil {
		h.OnDisconnected(err)
	}
}

// Aborted calls OnAborted.
func (h HandlerFuncs) Aborted(err error) {
	if h.OnAborted != nil {
		h.OnAborted(err)
	}
}

// MasterAddr is the master's host:port as its MasterInfo gives it (the
// hostname, else the IP), for logs; IPv6 hosts are bracketed.
func MasterAddr(m mesos.MasterInfo) string {
	host := m.GetHostname()
	if host == "" {
		ip := m.GetIP() // network byte order, as Mesos encodes it
		host = net.IPv4(byte(ip), byte(ip>>8), byte(ip>>16), byte(ip>>24)).String()
	}
	return net.JoinHostPort(host, strconv.Itoa(int(m.GetPort())))
}
