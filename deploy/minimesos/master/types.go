package master

import (
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/internal/mailbox"
)

type framework struct {
	id      string
	info    mesos.FrameworkInfo
	sub     *subscription
	active  bool
	removed bool
	caps    caps
	// tasks by id; unreachable ones move to unreachableTasks.
	tasks            map[string]*task
	unreachableTasks map[string]*task
	completedTasks   []*task
	// executors by agent id, then executor id.
	executors     map[string]map[string]*mesos.ExecutorInfo
	offers        map[string]*offer
	failover      *loop
	registered    time.Time
	reregistered  time.Time
	unregistered  time.Time
	suppressed    map[string]bool
	connectedOnce bool
	recoveredOnly bool // rebuilt from an agent, never subscribed to this master
}

type caps struct {
	multiRole, partitionAware, killing, gpu bool
}

func capsOf(fi *mesos.FrameworkInfo) caps {
	var c caps
	for _, cp := range fi.GetCapabilities() {
		switch cp.GetType() {
		case mesos.FrameworkInfo_Capability_MULTI_ROLE:
			c.multiRole = true
		case mesos.FrameworkInfo_Capability_PARTITION_AWARE:
			c.partitionAware = true
		case mesos.FrameworkInfo_Capability_TASK_KILLING_STATE:
			c.killing = true
		case mesos.FrameworkInfo_Capability_GPU_RESOURCES:
			c.gpu = true
		}
	}
	return c
}

// roles returns the framework's roles ("*" when none).
func frameworkRoles(fi *mesos.FrameworkInfo) []string {
	if capsOf(fi).multiRole {
		if len(fi.Roles) == 0 {
			return []string{"*"}
		}
		return append([]string(nil), fi.Roles...)
	}
	if r := fi.GetRole(); r != "" {
		return []string{r}
	}
	return []string{"*"}
}

func (f *framework) send(e *scheduler.Event) {
	if f.sub != nil {
		f.sub.push(e)
	}
}

type task struct {
	t       mesos.Task
	role    string
	latest  mesos.TaskStatus // latest status known to the master
	pending map[string]mesos.TaskState
	// recovered: resources returned to the allocator (terminal state seen).
	recovered bool
	// counted: its terminal state is counted in the metrics.
	counted bool
}

func (t *task) state() mesos.TaskState { return t.t.GetState() }

type agent struct {
	id         string
	info       mesos.AgentInfo
	endpoint   string
	to         link.Agent
	connected  bool
	active     bool
	missed     int
	lastPong   uint64
	pingPaused bool // fault hook: drop this agent's pongs
	registered time.Time
	total      mesos.Resources
}

type offer struct {
	id     string
	fw     string
	agent  string
	role   string
	res    mesos.Resources // with allocation_info, as the allocator has them
	offer  mesos.Offer     // as sent (maybe stripped)
	expire *loop
}

// subscription is one SUBSCRIBE stream. The master pushes events into its
// mailbox; the handler goroutine owning the HTTP response writes them.
type subscription struct {
	streamID string
	events   *mailbox.Mailbox[*scheduler.Event]
}

func newSubscription(id string) *subscription {
	return &subscription{streamID: id, events: mailbox.New[*scheduler.Event]()}
}

// push queues an event (dropped once the stream ends).
func (s *subscription) push(e *scheduler.Event) { s.events.Put(e) }

// end queues a last event (if any) and asks the writer to close the stream
// after it.
func (s *subscription) end(last *scheduler.Event) {
	if last != nil {
		s.events.End(last)
		return
	}
	s.events.End()
}

// take returns the events queued and whether the stream ends after them.
func (s *subscription) take() ([]*scheduler.Event, bool) { return s.events.TakeEnded(nil) }

// notify receives when events were queued or the stream ends.
func (s *subscription) notify() <-chan struct{} { return s.events.Wake() }
