package fine

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/mesosbackend"
)

// shutdownConn is a Mesos connection that records SHUTDOWN calls and
// accepts every other call.
type shutdownConn struct{ shutdowns []string }

func (c *shutdownConn) Launch([]mesos.OfferID, []mesos.TaskInfo) error         { return nil }
func (c *shutdownConn) Decline([]mesos.OfferID, mesosconn.DeclineReason) error { return nil }
func (c *shutdownConn) SetDemand(bool)                                         {}
func (c *shutdownConn) Kill(mesos.TaskID, *mesos.AgentID) error                { return nil }
func (c *shutdownConn) Shutdown(e mesos.ExecutorID, a mesos.AgentID) error {
	c.shutdowns = append(c.shutdowns, e.Value+"@"+a.Value)
	return nil
}
func (c *shutdownConn) Message(mesos.AgentID, mesos.ExecutorID, []byte) error { return nil }
func (c *shutdownConn) Master() mesos.MasterInfo                              { return mesos.MasterInfo{} }
func (c *shutdownConn) FrameworkID() string                                   { return "fw" }
func (c *shutdownConn) Stop(context.Context, bool) error                      { return nil }

var _ mesosbackend.Conn = (*shutdownConn)(nil)

func offerListing(id, agent string, execs ...string) mesos.Offer {
	o := mesos.Offer{ID: mesos.OfferID{Value: id}, AgentID: mesos.AgentID{Value: agent}, Hostname: "h-" + agent,
		Resources: mesos.Resources{
			{Name: "cpus", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 2}},
			{Name: "mem", Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: 4096}},
		}}
	for _, e := range execs {
		o.ExecutorIDs = append(o.ExecutorIDs, mesos.ExecutorID{Value: e})
	}
	return o
}

// A driver taking over a framework shuts down the executors of a previous
// driver that its agents' offers list — an idle executor holding a dead
// job's map outputs has no task for reconciliation to report, and never
// exits idle — but never its own executor nor an executor that is not
// Flint's; an offer listing the same executor again within a minute sends
// no second SHUTDOWN, one after that does (the first may have been lost).
func TestSuccessorShutsDownItsPredecessorsExecutors(t *testing.T) {
	conn := &shutdownConn{}
	b := newTestBackend(&recorder{})
	b.conn = conn
	b.idPrefix = "d1-"
	b.set = settings{taskCPUs: 1, execCPUs: 0.1, coresMax: math.Inf(1)}
	now := time.Unix(1000, 0)
	b.clock = nowFunc(func() time.Time { return now })
	offers := func() []mesos.Offer {
		return []mesos.Offer{
			offerListing("o1", "S0", "flint-fine-S0", "flint-fine-d1-S0", "someone-else"),
			offerListing("o2", "S1", "flint-fine-d0-S1"),
			offerListing("o3", "S2"),
		}
	}
	b.offersIn(offers())
	want := []string{"flint-fine-S0@S0", "flint-fine-d0-S1@S1"}
	if !slices.Equal(conn.shutdowns, want) {
		t.Fatalf("SHUTDOWN calls %v, want %v", conn.shutdowns, want)
	}
	now = now.Add(59 * time.Second)
	b.offersIn(offers())
	if !slices.Equal(conn.shutdowns, want) {
		t.Fatalf("within a minute: SHUTDOWN calls %v, want still %v", conn.shutdowns, want)
	}
	now = now.Add(time.Second)
	b.offersIn(offers())
	if want = append(want, want...); !slices.Equal(conn.shutdowns, want) {
		t.Fatalf("a minute later: SHUTDOWN calls %v, want %v", conn.shutdowns, want)
	}
}

// A driver of a new framework has no predecessor: it shuts nothing down,
// whatever the offers list.
func TestNewFrameworkShutsDownNoExecutor(t *testing.T) {
	conn := &shutdownConn{}
	b := newTestBackend(&recorder{})
	b.conn = conn
	b.set = settings{taskCPUs: 1, execCPUs: 0.1, coresMax: math.Inf(1)}
	b.offersIn([]mesos.Offer{offerListing("o1", "S0", "flint-fine-S0", "flint-fine-d0-S0")})
	if len(conn.shutdowns) != 0 {
		t.Fatalf("SHUTDOWN calls %v, want none", conn.shutdowns)
	}
}
