package agent

import (
	"os"
	"path/filepath"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/agent/containerizer"
	"github.com/flint-mesos/flint/internal/uuid"
)

// The in-process default executor runs task groups (LAUNCH_GROUP on an
// ExecutorInfo of type DEFAULT without a command), as Mesos' built-in
// default executor does: each task of a group is its own process, in its
// own sandbox <executor sandbox>/tasks/<task id> (its MESOS_SANDBOX and
// working directory, with its stdout and stderr), reporting STARTING,
// RUNNING and a terminal state. When a task of a group fails or is killed,
// the other tasks of that group are killed; SHUTDOWN kills every task; the
// executor ends once all its tasks are terminal. Later groups for the same
// executor id run on the same executor while it lives.

// defaultExecutor is the state of one in-process default executor.
type defaultExecutor struct {
	tasks     map[string]*groupTask
	nextGroup int
}

// groupTask is one task of a group run by the default executor.
type groupTask struct {
	info    mesos.TaskInfo
	group   int
	sandbox string
	proc    *containerizer.Process
	killed  bool
	grace   time.Duration
	done    bool // terminal update sent
	started bool // launch goroutine running or done
}

// isDefaultExecutor reports whether info is Mesos' default executor: type
// DEFAULT and no command (the master refuses a DEFAULT executor with one).
func isDefaultExecutor(info *mesos.ExecutorInfo) bool {
	return info != nil && info.Type == mesos.ExecutorInfo_DEFAULT && info.Command == nil
}

// TaskSandbox is the sandbox of a task run by the default executor:
// <executor sandbox>/tasks/<task id>, as in Mesos.
func TaskSandbox(executorSandbox, taskID string) string {
	return filepath.Join(executorSandbox, "tasks", taskID)
}

// launchDefaultLocked runs a group of tasks on the default executor ex.
func (a *Agent) launchDefaultLocked(ex *execRun, tasks []mesos.TaskInfo) {
	d := ex.dflt
	g := d.nextGroup
	d.nextGroup++
	var gts []*groupTask
	for _, ti := range tasks {
		ex.tasks[ti.TaskID.Value] = &task{info: ti, state: mesos.TASK_STAGING, launched: true, group: true}
		gt := &groupTask{info: ti, group: g}
		d.tasks[ti.TaskID.Value] = gt
		gts = append(gts, gt)
	}
	a.checkpointLocked(ex)
	for _, gt := range gts {
		a.startGroupTaskLocked(ex, gt)
	}
}

func (a *Agent) startGroupTaskLocked(ex *execRun, gt *groupTask) {
	gt.started = true
	if err := containerizer.CheckID("task", gt.info.TaskID.Value); err != nil {
		a.groupTaskEndedLocked(ex, gt, mesos.TASK_FAILED, mesos.REASON_CONTAINER_LAUNCH_FAILED.Enum(), "Failed to launch task: "+err.Error())
		return
	}
	gt.sandbox = TaskSandbox(ex.sandbox, gt.info.TaskID.Value)
	if gt.info.Command == nil {
		a.groupTaskEndedLocked(ex, gt, mesos.TASK_FAILED, mesos.REASON_CONTAINER_LAUNCH_FAILED.Enum(), "Failed to launch task: the task has no command")
		return
	}
	cmd := *gt.info.Command
	// The executor's MESOS_* variables, with the task's sandbox as
	// MESOS_SANDBOX / MESOS_DIRECTORY, then the task's environment.
	spec := containerizer.Spec{Command: cmd, Sandbox: gt.sandbox, Env: a.envInLocked(ex, cmd, gt.sandbox), User: runAs(cmd, ex.fw.info), Container: gt.info.Container, Secrets: a.cfg.SecretResolver, Clock: a.cfg.Clock}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		err := os.MkdirAll(gt.sandbox, 0o755)
		if err == nil {
			err = a.fetch(a.ctx, cmd.URIs, gt.sandbox)
		}
		a.mu.Lock()
		if err != nil {
			defer a.mu.Unlock()
			a.groupTaskEndedLocked(ex, gt, mesos.TASK_FAILED, mesos.REASON_CONTAINER_LAUNCH_FAILED.Enum(), a.launchFailure("Failed to launch task: ", err))
			return
		}
		if a.closed {
			a.mu.Unlock()
			return
		}
		if gt.killed {
			defer a.mu.Unlock()
			a.groupTaskEndedLocked(ex, gt, mesos.TASK_KILLED, nil, "Task killed before it was launched")
			return
		}
		a.groupUpdateLocked(ex, gt, mesos.TASK_STARTING, nil, "")
		a.mu.Unlock()
		proc, err := containerizer.Launch(spec)
		a.mu.Lock()
		defer a.mu.Unlock()
		if err != nil {
			a.groupTaskEndedLocked(ex, gt, mesos.TASK_FAILED, mesos.REASON_CONTAINER_LAUNCH_FAILED.Enum(), a.launchFailure("Failed to launch task: ", err))
			return
		}
		if a.closed {
			a.mu.Unlock()
			killAndWait(proc)
			a.mu.Lock()
			return
		}
		gt.proc = proc
		if gt.killed {
			proc.Kill(gt.grace)
		} else {
			a.groupUpdateLocked(ex, gt, mesos.TASK_RUNNING, nil, "")
		}
		a.watchGroupTaskLocked(ex, gt)
	}()
}

func (a *Agent) watchGroupTaskLocked(ex *execRun, gt *groupTask) {
	proc := gt.proc
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		<-proc.Done() // Close and Stop kill and wait for the process
		proc.Destroy()
		st := proc.Status()
		a.mu.Lock()
		defer a.mu.Unlock()
		if a.closed {
			return
		}
		msg := "Command " + st.String()
		var reason *mesos.TaskStatus_Reason
		state := mesos.TASK_FAILED
		switch {
		case st.Success():
			state = mesos.TASK_FINISHED
		case gt.killed:
			state = mesos.TASK_KILLED
		default:
			reason = mesos.REASON_COMMAND_EXECUTOR_FAILED.Enum()
		}
		a.groupTaskEndedLocked(ex, gt, state, reason, msg)
	}()
}

// groupUpdateLocked sends an update as Mesos' default executor would.
func (a *Agent) groupUpdateLocked(ex *execRun, gt *groupTask, state mesos.TaskState, reason *mesos.TaskStatus_Reason, msg string) {
	st := mesos.TaskStatus{
		TaskID: gt.info.TaskID, State: state.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(),
		ExecutorID: &ex.info.ExecutorID, UUID: uuid.New(), Timestamp: now(), Reason: reason,
	}
	if msg != "" {
		st.Message = &msg
	}
	if _, err := a.updateLocked(ex.fw, &ex.info.ExecutorID, st); err != nil {
		a.log.WithError(err).Debug("agent: default executor update refused")
	}
}

// groupTaskEndedLocked reports a task's terminal state, applies the group
// policy (a failed or killed task kills the rest of its group) and ends
// the executor once all its tasks are terminal.
func (a *Agent) groupTaskEndedLocked(ex *execRun, gt *groupTask, state mesos.TaskState, reason *mesos.TaskStatus_Reason, msg string) {
	if gt.done {
		return
	}
	gt.done, gt.proc = true, nil
	a.groupUpdateLocked(ex, gt, state, reason, msg)
	a.checkpointLocked(ex)
	if (state == mesos.TASK_FAILED || state == mesos.TASK_KILLED) && !gt.killed && ex.state < exTerminating {
		a.log.WithField("task", gt.info.TaskID.Value).Info("agent: default executor: task of a group " +
			state.String() + "; killing the other tasks of its group")
		for _, o := range ex.dflt.tasks {
			if o.group == gt.group && o != gt {
				a.killGroupTaskLocked(ex, o, nil)
			}
		}
	}
	a.maybeEndDefaultLocked(ex)
}

func (a *Agent) maybeEndDefaultLocked(ex *execRun) {
	for _, o := range ex.dflt.tasks {
		if !o.done {
			return
		}
	}
	a.executorGoneLocked(ex, containerizer.Status{Exited: true}, mesos.TASK_FAILED, mesos.REASON_EXECUTOR_TERMINATED, "Executor terminated")
}

// killGroupTaskLocked kills one task: TASK_KILLING for frameworks that
// understand it, SIGTERM to its process tree, SIGKILL after the kill
// policy's grace period (the KILL's policy overrides the task's).
func (a *Agent) killGroupTaskLocked(ex *execRun, gt *groupTask, kp *mesos.KillPolicy) {
	if gt.done {
		return
	}
	grace := a.cfg.KillGrace
	if p := gt.info.GetKillPolicy().GetGracePeriod(); p != nil {
		grace = time.Duration(p.Nanoseconds)
	}
	if p := kp.GetGracePeriod(); p != nil {
		grace = time.Duration(p.Nanoseconds)
	}
	gt.grace = grace
	if !gt.killed {
		gt.killed = true
		if hasCapability(ex.fw.info, mesos.FrameworkInfo_Capability_TASK_KILLING_STATE) && gt.proc != nil {
			a.groupUpdateLocked(ex, gt, mesos.TASK_KILLING, nil, "")
		}
	}
	if gt.proc != nil {
		gt.proc.Kill(grace)
	}
}

// killDefaultTaskLocked handles KILL of a task on the default executor:
// as in Mesos, the whole group of the task is killed.
func (a *Agent) killDefaultTaskLocked(ex *execRun, taskID string, kp *mesos.KillPolicy) {
	gt := ex.dflt.tasks[taskID]
	if gt == nil {
		return
	}
	a.killGroupTaskLocked(ex, gt, kp)
	for _, o := range ex.dflt.tasks {
		if o.group == gt.group && o != gt {
			a.killGroupTaskLocked(ex, o, nil)
		}
	}
}

// shutdownDefaultLocked kills every task of the default executor (each
// ends TASK_KILLED); the executor ends with its last task.
func (a *Agent) shutdownDefaultLocked(ex *execRun) {
	for _, gt := range ex.dflt.tasks {
		a.killGroupTaskLocked(ex, gt, nil)
	}
	a.maybeEndDefaultLocked(ex)
}

// defaultProcsLocked lists the live task processes of default executors
// (Stop and Close kill them: they are not recoverable).
func (a *Agent) defaultProcsLocked() []*containerizer.Process {
	var out []*containerizer.Process
	for _, fw := range a.frameworks {
		for _, ex := range fw.executors {
			if ex.dflt == nil {
				continue
			}
			for _, gt := range ex.dflt.tasks {
				if gt.proc != nil {
					out = append(out, gt.proc)
				}
			}
		}
	}
	return out
}

// newDefaultExecutorLocked creates the in-process default executor of info.
func (a *Agent) newDefaultExecutorLocked(fw *framework, info mesos.ExecutorInfo) (*execRun, error) {
	ex, err := a.newExecutorLocked(fw, info, nil)
	if err != nil {
		return nil, err
	}
	ex.dflt = &defaultExecutor{tasks: map[string]*groupTask{}}
	ex.state = exRunning
	return ex, nil
}
