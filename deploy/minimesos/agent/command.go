package agent

import (
	"errors"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/agent/containerizer"
	"github.com/flint-mesos/flint/internal/uuid"
)

// Resources the command executor adds for itself, as Mesos does.
const (
	CommandExecutorCPUs = 0.1
	CommandExecutorMem  = 32
)

// commandTask is the in-process command executor's state for its one task.
type commandTask struct {
	info   mesos.TaskInfo
	killed bool
}

func scalar(name string, v float64, like []mesos.Resource) mesos.Resource {
	r := mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
	if len(like) > 0 {
		r.Role, r.AllocationInfo, r.Reservations = like[0].Role, like[0].AllocationInfo, like[0].Reservations
	}
	return r
}

// CommandExecutorInfo is the ExecutorInfo the agent reports for a command
// task's executor: executor id = task id, 0.1 cpus and 32 MB.
func CommandExecutorInfo(fw mesos.FrameworkID, t mesos.TaskInfo) mesos.ExecutorInfo {
	cmd := t.GetCommand()
	name := "Command Executor (Task: " + t.TaskID.Value + ") (Command: sh -c '" + cmd.GetValue() + "')"
	if cmd.Shell != nil && !*cmd.Shell {
		name = "Command Executor (Task: " + t.TaskID.Value + ") (Command: [" + cmd.GetValue() + "])"
	}
	src := t.TaskID.Value
	return mesos.ExecutorInfo{
		ExecutorID: mesos.ExecutorID{Value: t.TaskID.Value}, FrameworkID: &fw, Name: &name, Source: &src,
		Command:   cmd,
		Resources: []mesos.Resource{scalar("cpus", CommandExecutorCPUs, t.Resources), scalar("mem", CommandExecutorMem, t.Resources)},
	}
}

func (a *Agent) launchCommandLocked(fw *framework, ti mesos.TaskInfo) {
	exID := mesos.ExecutorID{Value: ti.TaskID.Value}
	if fw.executors[exID.Value] != nil {
		a.agentUpdateLocked(fw, &exID, ti.TaskID, mesos.TASK_FAILED, mesos.REASON_COMMAND_EXECUTOR_FAILED,
			`Attempted to run multiple tasks using a "command" executor`)
		return
	}
	if ti.Command == nil {
		a.agentUpdateLocked(fw, &exID, ti.TaskID, mesos.TASK_ERROR, mesos.REASON_TASK_INVALID, "Task has neither command nor executor")
		return
	}
	// The executor's own 0.1 cpus / 32 MB are an allowance, as in Mesos:
	// only the task's resources must fit.
	if msg := a.admitLocked(nil, []mesos.TaskInfo{ti}); msg != "" {
		a.refuseLocked(fw, exID, false, []mesos.TaskInfo{ti}, msg)
		return
	}
	ct := &commandTask{info: ti}
	ex, err := a.newExecutorLocked(fw, CommandExecutorInfo(fw.id(), ti), ct)
	if err != nil {
		a.agentUpdateLocked(fw, &exID, ti.TaskID, mesos.TASK_FAILED, mesos.REASON_CONTAINER_LAUNCH_FAILED, a.launchFailure("", err))
		return
	}
	ex.state = exRunning
	ex.tasks[ti.TaskID.Value] = &task{info: ti, state: mesos.TASK_STAGING, launched: true}
	spec := containerizer.Spec{Command: *ti.Command, Sandbox: ex.sandbox, Env: a.envLocked(ex, *ti.Command), User: runAs(*ti.Command, fw.info), Container: ti.Container, Secrets: a.cfg.SecretResolver, Clock: a.cfg.Clock}
	a.checkpointLocked(ex)
	fetchCtx := a.fetchContextLocked(ex)
	res := ti.Resources
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		// As in Mesos, URIs are fetched before the command executor runs: a
		// failure is the agent's TASK_FAILED, with no TASK_STARTING.
		err := a.checkContainer(spec.Container)
		if errors.Is(err, containerizer.ErrNotSupported) {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.executorGoneLocked(ex, containerizer.Status{Unknown: true}, mesos.TASK_FAILED, mesos.REASON_EXECUTOR_TERMINATED, containerizer.NotSupportedMessage)
			return
		}
		if err == nil {
			err = a.fetch(fetchCtx, ti.Command.URIs, spec.Sandbox)
		}
		if err != nil {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.executorGoneLocked(ex, containerizer.Status{Exited: true, Code: 1}, mesos.TASK_FAILED,
				mesos.REASON_CONTAINER_LAUNCH_FAILED, a.launchFailure("Failed to launch container: ", err))
			return
		}
		a.mu.Lock()
		a.commandUpdateLocked(ex, mesos.TASK_STARTING, nil, "")
		a.mu.Unlock()
		proc, err := a.launch(spec, ex, res)
		a.mu.Lock()
		defer a.mu.Unlock()
		if err != nil {
			reason := mesos.REASON_CONTAINER_LAUNCH_FAILED
			prefix := "Failed to launch task: "
			if a.docker != nil && containerizer.IsDocker(spec.Container) {
				prefix = "Failed to launch container: "
			}
			a.commandUpdateLocked(ex, mesos.TASK_FAILED, &reason, a.launchFailure(prefix, err))
			a.executorGoneLocked(ex, containerizer.Status{Exited: true, Code: 1}, mesos.TASK_FAILED, reason, "")
			return
		}
		if a.closed {
			a.launchedAfterCloseLocked(ex, proc)
			return
		}
		ex.proc = proc
		if ct.killed {
			proc.Kill(0)
		} else {
			a.commandUpdateLocked(ex, mesos.TASK_RUNNING, nil, "")
		}
		a.checkpointLocked(ex)
		a.watchCommandLocked(ex)
	}()
}

// commandUpdateLocked sends an update as the command executor would.
func (a *Agent) commandUpdateLocked(ex *execRun, state mesos.TaskState, reason *mesos.TaskStatus_Reason, msg string) {
	st := mesos.TaskStatus{
		TaskID: ex.command.info.TaskID, State: state.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(),
		ExecutorID: &ex.info.ExecutorID, UUID: uuid.New(), Timestamp: now(), Reason: reason,
	}
	if msg != "" {
		st.Message = &msg
	}
	if _, err := a.updateLocked(ex.fw, &ex.info.ExecutorID, st); err != nil {
		a.log.WithError(err).Debug("agent: command executor update refused")
	}
}

func (a *Agent) watchCommandLocked(ex *execRun) {
	a.onExitLocked(ex, func(st containerizer.Status) {
		msg := "Command " + st.String()
		var reason *mesos.TaskStatus_Reason
		state := mesos.TASK_FAILED
		switch {
		case ex.command.killed:
			state = mesos.TASK_KILLED
		case st.Success():
			state = mesos.TASK_FINISHED
		case st.Unknown:
			reason = mesos.REASON_EXECUTOR_TERMINATED.Enum()
			msg = "Command executor terminated while the agent was restarting; exit status unknown"
		default:
			reason = mesos.REASON_COMMAND_EXECUTOR_FAILED.Enum()
		}
		a.commandUpdateLocked(ex, state, reason, msg)
		a.executorGoneLocked(ex, containerizer.Status{Exited: true}, mesos.TASK_FAILED, mesos.REASON_EXECUTOR_TERMINATED, "Executor terminated")
	})
}

// killCommandLocked kills a command task: TASK_KILLING for frameworks
// that understand it, SIGTERM to the process tree, SIGKILL after the kill
// policy's grace period (the KillTask's policy overrides the task's).
func (a *Agent) killCommandLocked(ex *execRun, kp *mesos.KillPolicy) {
	ct := ex.command
	grace := a.cfg.KillGrace
	if p := ct.info.GetKillPolicy().GetGracePeriod(); p != nil {
		grace = time.Duration(p.Nanoseconds)
	}
	if p := kp.GetGracePeriod(); p != nil {
		grace = time.Duration(p.Nanoseconds)
	}
	if !ct.killed {
		ct.killed = true
		if hasCapability(ex.fw.info, mesos.FrameworkInfo_Capability_TASK_KILLING_STATE) {
			a.commandUpdateLocked(ex, mesos.TASK_KILLING, nil, "")
		}
	}
	if ex.proc != nil {
		ex.proc.Kill(grace)
	}
}

func hasCapability(fw mesos.FrameworkInfo, c mesos.FrameworkInfo_Capability_Type) bool {
	for _, cp := range fw.Capabilities {
		if cp.Type == c {
			return true
		}
	}
	return false
}
