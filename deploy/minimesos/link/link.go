package link

import (
	"context"
	"errors"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Errors shared by both transports.
var (
	// ErrUnknownAgent: the master does not know (or has removed) the agent; it must register anew.
	ErrUnknownAgent = errors.New("link: unknown agent")
	// ErrClosed: the connection is closed.
	ErrClosed = errors.New("link: connection closed")
)

// Master is the master side of the protocol, as agents see it.
type Master interface {
	// RegisterAgent registers (r.AgentInfo.ID == nil) or re-registers an
	// agent. to receives the master's messages until the agent disconnects
	// or registers again.
	RegisterAgent(ctx context.Context, r Registration, to Agent) (Registered, error)
	// FromAgent handles one message from a registered agent.
	FromAgent(ctx context.Context, agentID string, m AgentMessage) error
	// AgentDisconnected reports that the transport to the agent broke; to
	// identifies the connection so a stale one cannot disconnect a fresh one.
	AgentDisconnected(agentID string, to Agent)
}

// Agent is the agent side of one connection, as the master sees it.
// Deliver must return quickly and must not call the Master synchronously.
type Agent interface {
	Deliver(m MasterMessage) error
}

// AgentFunc adapts a function to Agent.
type AgentFunc func(MasterMessage) error

// Deliver calls f(m).
func (f AgentFunc) Deliver(m MasterMessage) error { return f(m) }

// Registration is what an agent sends to (re-)register.
type Registration struct {
	// AgentInfo.ID is set when re-registering.
	AgentInfo mesos.AgentInfo `json:"agent_info"`
	// Endpoint is the agent's HTTP address (host:port) serving the executor
	// API and /files; empty for in-process agents without HTTP.
	Endpoint string `json:"endpoint,omitempty"`
	// Frameworks, Executors and Tasks describe what is still running on a
	// re-registering agent, so a restarted master can rebuild its state.
	Frameworks []mesos.FrameworkInfo `json:"frameworks,omitempty"`
	Executors  []Executor            `json:"executors,omitempty"`
	Tasks      []mesos.Task          `json:"tasks,omitempty"`
}

// Executor is an executor running on an agent.
type Executor struct {
	FrameworkID mesos.FrameworkID  `json:"framework_id"`
	Info        mesos.ExecutorInfo `json:"info"`
}

// Registered is the master's answer to a registration.
type Registered struct {
	AgentID    mesos.AgentID    `json:"agent_id"`
	MasterInfo mesos.MasterInfo `json:"master_info"`
	// PingInterval is how often the master pings.
	PingInterval time.Duration `json:"ping_interval"`
	// PingTimeout is how long an agent that hears no ping waits before it
	// takes the master for gone and re-registers: the master's ping
	// interval × its max missed pings, as Mesos' master announces in
	// MasterSlaveConnection.total_ping_timeout_seconds. Zero: five
	// intervals (Mesos' default max_agent_ping_timeouts).
	PingTimeout time.Duration `json:"total_ping_timeout,omitempty"`
}

// MasterMessage is one message from the master to an agent; exactly one
// field is set.
type MasterMessage struct {
	RunTask           *RunTask           `json:"run_task,omitempty"`
	KillTask          *KillTask          `json:"kill_task,omitempty"`
	ShutdownExecutor  *ShutdownExecutor  `json:"shutdown_executor,omitempty"`
	ShutdownFramework *ShutdownFramework `json:"shutdown_framework,omitempty"`
	Acknowledge       *Acknowledge       `json:"acknowledge,omitempty"`
	FrameworkMessage  *FrameworkMessage  `json:"framework_message,omitempty"`
	UpdateFramework   *UpdateFramework   `json:"update_framework,omitempty"`
	ReconcileTasks    *ReconcileTasks    `json:"reconcile_tasks,omitempty"`
	Ping              *Ping              `json:"ping,omitempty"`
}

// RunTask launches one task (Task set) or a task group (Group and Executor
// set) for a framework. For a command task Task.Executor is nil and the
// agent runs its command executor.
type RunTask struct {
	Framework mesos.FrameworkInfo  `json:"framework"`
	Task      *mesos.TaskInfo      `json:"task,omitempty"`
	Executor  *mesos.ExecutorInfo  `json:"executor,omitempty"`
	Group     *mesos.TaskGroupInfo `json:"group,omitempty"`
	// Resources of the offer the task was launched from, for accounting.
	AllocationRole string `json:"allocation_role,omitempty"`
}

// KillTask kills a task; KillPolicy (optional) overrides the task's.
type KillTask struct {
	FrameworkID mesos.FrameworkID `json:"framework_id"`
	TaskID      mesos.TaskID      `json:"task_id"`
	KillPolicy  *mesos.KillPolicy `json:"kill_policy,omitempty"`
}

// ShutdownExecutor shuts one executor down (its tasks become TASK_KILLED or
// TASK_LOST).
type ShutdownExecutor struct {
	FrameworkID mesos.FrameworkID `json:"framework_id"`
	ExecutorID  mesos.ExecutorID  `json:"executor_id"`
}

// ShutdownFramework shuts down every executor of a removed framework.
type ShutdownFramework struct {
	FrameworkID mesos.FrameworkID `json:"framework_id"`
}

// Acknowledge forwards a framework's ACKNOWLEDGE of a status update.
type Acknowledge struct {
	FrameworkID mesos.FrameworkID `json:"framework_id"`
	TaskID      mesos.TaskID      `json:"task_id"`
	UUID        []byte            `json:"uuid"`
}

// FrameworkMessage carries a scheduler's MESSAGE to an executor.
type FrameworkMessage struct {
	FrameworkID mesos.FrameworkID `json:"framework_id"`
	ExecutorID  mesos.ExecutorID  `json:"executor_id"`
	Data        []byte            `json:"data"`
}

// UpdateFramework tells agents about a framework's new FrameworkInfo.
type UpdateFramework struct {
	Framework mesos.FrameworkInfo `json:"framework"`
}

// ReconcileTasks asks a re-registered agent about tasks (and executors)
// the master has for it but its registration left out, as Mesos' master
// sends ReconcileTasksMessage from reconcileKnownSlave: the agent may not
// have handled a RunTask yet when it built the registration, or the
// RunTask may have been lost. It follows every earlier message on the same
// connection, so the agent answers once it has handled those: each task it
// does not know becomes TASK_LOST (TASK_DROPPED for partition-aware
// frameworks) with REASON_RECONCILIATION, and each listed executor it does
// not run is reported with ExecutorExited; what it knows needs no answer.
type ReconcileTasks struct {
	Framework mesos.FrameworkInfo `json:"framework"`
	Tasks     []ReconcileTask     `json:"tasks"`
	// Executors the master kept because a listed task uses them.
	Executors []mesos.ExecutorID `json:"executors,omitempty"`
}

// ReconcileTask is one task of a ReconcileTasks.
type ReconcileTask struct {
	TaskID     mesos.TaskID      `json:"task_id"`
	ExecutorID *mesos.ExecutorID `json:"executor_id,omitempty"`
}

// Ping is the master's liveness check; the agent answers with Pong.
type Ping struct {
	Seq uint64 `json:"seq"`
}

// AgentMessage is one message from an agent to the master; exactly one
// field is set.
type AgentMessage struct {
	StatusUpdate    *StatusUpdate    `json:"status_update,omitempty"`
	ExecutorExited  *ExecutorExited  `json:"executor_exited,omitempty"`
	ExecutorMessage *ExecutorMessage `json:"executor_message,omitempty"`
	Pong            *Pong            `json:"pong,omitempty"`
}

// StatusUpdate is a task status update from the agent's status update
// manager. Status carries agent_id, uuid and source. The agent resends it
// until the master forwards the framework's acknowledgement.
type StatusUpdate struct {
	FrameworkID mesos.FrameworkID `json:"framework_id"`
	Status      mesos.TaskStatus  `json:"status"`
	// ExecutorID is empty for command tasks launched before their executor id is known.
	ExecutorID *mesos.ExecutorID `json:"executor_id,omitempty"`
}

// ExecutorExited reports that an executor process ended; the master frees
// its resources and sends the framework a FAILURE event.
type ExecutorExited struct {
	FrameworkID mesos.FrameworkID `json:"framework_id"`
	ExecutorID  mesos.ExecutorID  `json:"executor_id"`
	// Status is the wait status (exit code, or 128+signal), as Mesos reports it.
	Status int32 `json:"status"`
}

// ExecutorMessage carries an executor's MESSAGE to its scheduler.
type ExecutorMessage struct {
	FrameworkID mesos.FrameworkID `json:"framework_id"`
	ExecutorID  mesos.ExecutorID  `json:"executor_id"`
	Data        []byte            `json:"data"`
}

// Pong answers a Ping.
type Pong struct {
	Seq uint64 `json:"seq"`
}
