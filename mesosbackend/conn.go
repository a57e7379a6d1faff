package mesosbackend

import (
	"context"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesosconn"
)

// Conn is what a Mesos backend calls on its connection to the master:
// *mesosconn.Conn in production; backend tests (and a simulated master)
// give a fake that records the calls. Events travel the other way, through
// the mesosconn.Handler the backend subscribes with.
type Conn interface {
	Launch(offerIDs []mesos.OfferID, tasks []mesos.TaskInfo) error
	Decline(offerIDs []mesos.OfferID, why mesosconn.DeclineReason) error
	SetDemand(on bool)
	Kill(taskID mesos.TaskID, agentID *mesos.AgentID) error
	Shutdown(executorID mesos.ExecutorID, agentID mesos.AgentID) error
	Message(agentID mesos.AgentID, executorID mesos.ExecutorID, data []byte) error
	Master() mesos.MasterInfo
	FrameworkID() string
	Stop(ctx context.Context, teardown bool) error
}

var _ Conn = (*mesosconn.Conn)(nil)

// Dialer subscribes a backend to its master with handler h, returning the
// connection and the framework user. SubscribeWith(s) is the production
// one; a test or a simulation passes its own.
type Dialer func(ctx context.Context, h mesosconn.Handler) (conn Conn, user string, err error)

// SubscribeWith is the Dialer that Subscribes with fc and s.
func SubscribeWith(fc *config.Config, s Subscription) Dialer {
	return func(ctx context.Context, h mesosconn.Handler) (Conn, string, error) {
		c, user, err := Subscribe(ctx, fc, s, h)
		if c == nil {
			return nil, user, err // no typed nil in the interface
		}
		return c, user, err
	}
}
