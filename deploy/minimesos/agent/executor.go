package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/agent/containerizer"
	"github.com/flint-mesos/flint/deploy/minimesos/agent/statusupdate"
	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/internal/uuid"
)

type framework struct {
	info      mesos.FrameworkInfo
	executors map[string]*execRun
	removing  bool
}

func (f *framework) id() mesos.FrameworkID { return *f.info.ID }

type exState int

const (
	exLaunching   exState = iota // process starting or not yet subscribed
	exRunning                    // subscribed at least once
	exTerminating                // shutdown or kill in progress
	exTerminated
)

type task struct {
	info     mesos.TaskInfo
	state    mesos.TaskState
	launched bool // handed to the executor (false: queued until SUBSCRIBE)
	group    bool
}

// execRun is one executor run: a process, or the in-process command
// executor of one command task.
type execRun struct {
	fw          *framework
	info        mesos.ExecutorInfo
	containerID string
	sandbox     string
	command     *commandTask     // set for command executors
	dflt        *defaultExecutor // set for the in-process default executor
	proc        *containerizer.Process
	state       exState
	tasks       map[string]*task
	queuedGroup []mesos.TaskGroupInfo
	sub         *subscription
	regTimer    *time.Timer
	killTimer   *time.Timer
	recovered   bool
	pidRecorded bool // non-checkpointing run: pid checkpointed once
	// stopFetch cancels the run's fetch: a container destroyed while it
	// fetches stops fetching, as Mesos' containerizer kills its fetcher,
	// rather than waiting on a file server that may never answer.
	stopFetch context.CancelFunc
}

func (ex *execRun) stopTimers() {
	for _, t := range []*time.Timer{ex.regTimer, ex.killTimer} {
		if t != nil {
			t.Stop()
		}
	}
}

func (ex *execRun) closeSubscription() {
	if ex.sub != nil {
		ex.sub.close()
		ex.sub = nil
	}
}

func (ex *execRun) reportTasks(agentID string) []mesos.Task {
	var out []mesos.Task
	for _, t := range ex.tasks {
		out = append(out, mesos.Task{
			Name: t.info.Name, TaskID: t.info.TaskID, FrameworkID: ex.fw.id(),
			ExecutorID: &ex.info.ExecutorID, AgentID: mesos.AgentID{Value: agentID},
			State: t.state.Enum(), Resources: t.info.Resources,
		})
	}
	return out
}

// runTask handles RunTask: command tasks get a command executor; tasks and
// groups for a custom executor are queued until it subscribes.
func (a *Agent) runTask(rt link.RunTask) {
	fwID := rt.Framework.GetID().GetValue()
	if fwID == "" {
		a.log.Warn("agent: RunTask without framework id")
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	// A framework forgotten since its last launch here (no executor left)
	// is recreated, as Mesos' agent does on RunTask.
	fw := a.frameworks[fwID]
	if fw == nil {
		fw = &framework{info: rt.Framework, executors: map[string]*execRun{}}
		a.frameworks[fwID] = fw
	}
	fw.info, fw.removing = rt.Framework, false
	// A launch that started no executor (refused, invalid) leaves nothing.
	defer a.forgetFrameworkLocked(fw)
	var tasks []mesos.TaskInfo
	var info mesos.ExecutorInfo
	switch {
	case rt.Task != nil && rt.Task.Executor == nil && rt.Executor == nil:
		a.launchCommandLocked(fw, *rt.Task)
		return
	case rt.Group != nil:
		if rt.Executor == nil {
			return
		}
		info, tasks = *rt.Executor, rt.Group.Tasks
	case rt.Task != nil:
		info = *rt.Task.Executor
		if rt.Executor != nil {
			info = *rt.Executor
		}
		tasks = []mesos.TaskInfo{*rt.Task}
	default:
		return
	}
	info.FrameworkID = fw.info.ID
	ex := fw.executors[info.ExecutorID.Value]
	dflt := isDefaultExecutor(&info) && (ex == nil || ex.dflt != nil)
	if ex != nil && ex.state >= exTerminating {
		for _, t := range tasks {
			a.agentUpdateLocked(fw, &info.ExecutorID, t.TaskID, mesos.TASK_LOST, mesos.REASON_EXECUTOR_TERMINATED, "Executor terminating")
		}
		return
	}
	var newResources []mesos.Resource
	if ex == nil {
		newResources = info.Resources
	}
	if msg := a.admitLocked(newResources, tasks); msg != "" {
		a.refuseLocked(fw, info.ExecutorID, ex == nil, tasks, msg)
		return
	}
	if ex == nil {
		var err error
		if dflt {
			ex, err = a.newDefaultExecutorLocked(fw, info)
		} else {
			ex, err = a.newExecutorLocked(fw, info, nil)
		}
		if err != nil {
			for _, t := range tasks {
				a.agentUpdateLocked(fw, &info.ExecutorID, t.TaskID, mesos.TASK_FAILED, mesos.REASON_CONTAINER_LAUNCH_FAILED, a.launchFailure("", err))
			}
			return
		}
		if !dflt {
			a.startExecutorLocked(ex)
		}
	}
	if dflt {
		a.launchDefaultLocked(ex, tasks)
		return
	}
	for _, t := range tasks {
		ex.tasks[t.TaskID.Value] = &task{info: t, state: mesos.TASK_STAGING, group: rt.Group != nil}
	}
	if rt.Group != nil {
		ex.queuedGroup = append(ex.queuedGroup, *rt.Group)
	}
	if ex.sub != nil {
		a.flushQueuedLocked(ex)
	}
	a.checkpointLocked(ex)
}

// flushQueuedLocked sends LAUNCH / LAUNCH_GROUP for queued tasks.
func (a *Agent) flushQueuedLocked(ex *execRun) {
	for _, g := range ex.queuedGroup {
		g := g
		ex.sub.push(&executor.Event{Type: executor.Event_LAUNCH_GROUP, LaunchGroup: &executor.Event_LaunchGroup{TaskGroup: g}})
		for _, t := range g.Tasks {
			if ts := ex.tasks[t.TaskID.Value]; ts != nil {
				ts.launched = true
			}
		}
	}
	ex.queuedGroup = nil
	for _, t := range ex.tasks {
		if !t.launched && !t.group {
			t.launched = true
			ex.sub.push(&executor.Event{Type: executor.Event_LAUNCH, Launch: &executor.Event_Launch{Task: t.info}})
		}
	}
}

func (a *Agent) newExecutorLocked(fw *framework, info mesos.ExecutorInfo, cmd *commandTask) (*execRun, error) {
	if a.agentID == "" {
		return nil, fmt.Errorf("agent: not registered")
	}
	cid := uuid.NewString()
	sandbox, err := containerizer.CreateSandbox(a.cfg.WorkDir, a.agentID, fw.id().Value, info.ExecutorID.Value, cid)
	if err != nil {
		return nil, fmt.Errorf("Failed to create sandbox: %w", err)
	}
	ex := &execRun{fw: fw, info: info, containerID: cid, sandbox: sandbox, command: cmd, tasks: map[string]*task{}}
	fw.executors[info.ExecutorID.Value] = ex
	return ex, nil
}

// env is the MESOS_* environment of an executor, then its command's.
func (a *Agent) envLocked(ex *execRun, cmd mesos.CommandInfo) []string {
	return a.envInLocked(ex, cmd, ex.sandbox)
}

// envInLocked is envLocked with sandbox as MESOS_SANDBOX (a task's own
// sandbox under the default executor).
func (a *Agent) envInLocked(ex *execRun, cmd mesos.CommandInfo, sandbox string) []string {
	grace := a.cfg.ShutdownGrace
	if gp := ex.info.GetShutdownGracePeriod(); gp != nil && gp.Nanoseconds > 0 {
		grace = time.Duration(gp.Nanoseconds)
	}
	e := containerizer.ExecutorEnv{
		FrameworkID: ex.fw.id().Value, ExecutorID: ex.info.ExecutorID.Value, AgentID: a.agentID,
		Sandbox: sandbox, AgentEndpoint: a.cfg.Endpoint, ShutdownGrace: grace,
		Checkpoint: ex.fw.info.GetCheckpoint(), RecoveryTimeout: a.cfg.RecoveryTimeout,
		SubscriptionBackoffMax: a.cfg.SubscriptionBackoffMax,
	}
	return containerizer.BuildEnv(a.cfg.Env, e.Vars(), cmd.Environment)
}

func runAs(cmd mesos.CommandInfo, fw mesos.FrameworkInfo) string {
	if u := cmd.GetUser(); u != "" {
		return u
	}
	return fw.GetUser()
}

// testHookLaunched, if set (tests only), runs in the launch goroutine
// between the start of an executor's process and its recording.
var testHookLaunched func(a *Agent, pid int)

// startExecutorLocked fetches and spawns a custom executor in the
// background and arms the registration timeout.
func (a *Agent) startExecutorLocked(ex *execRun) {
	cmd := ex.info.GetCommand()
	if cmd == nil {
		cmd = &mesos.CommandInfo{}
	}
	spec := containerizer.Spec{Command: *cmd, Sandbox: ex.sandbox, Env: a.envLocked(ex, *cmd), User: runAs(*cmd, ex.fw.info), Container: ex.info.Container, Secrets: a.cfg.SecretResolver, Clock: a.cfg.Clock}
	uris := cmd.URIs
	ex.regTimer = time.AfterFunc(a.cfg.RegistrationTimeout, func() { a.registrationTimeout(ex) })
	fetchCtx := a.fetchContextLocked(ex)
	res := executorResources(ex)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		var proc *containerizer.Process
		err := a.checkContainer(spec.Container)
		if errors.Is(err, containerizer.ErrNotSupported) {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.log.WithError(err).WithField("executor", ex.info.ExecutorID.Value).Warn("agent: executor not launched")
			a.executorGoneLocked(ex, containerizer.Status{Unknown: true}, mesos.TASK_FAILED, mesos.REASON_EXECUTOR_TERMINATED, containerizer.NotSupportedMessage)
			return
		}
		if err == nil {
			err = a.fetch(fetchCtx, uris, spec.Sandbox)
		}
		if err == nil {
			proc, err = a.launch(spec, ex, res)
		}
		if err == nil && testHookLaunched != nil {
			testHookLaunched(a, proc.Pid())
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		if err == nil && a.closed {
			a.launchedAfterCloseLocked(ex, proc)
			return
		}
		if err == nil && ex.state >= exTerminating {
			proc.Kill(0)
		}
		if err != nil {
			a.log.WithError(err).WithField("executor", ex.info.ExecutorID.Value).Warn("agent: executor launch failed")
			// No process ran, so no wait status: Mesos' agent reports
			// an executor whose container has none as status -1
			// ("terminated with unknown status").
			a.executorGoneLocked(ex, containerizer.Status{}, mesos.TASK_FAILED,
				mesos.REASON_CONTAINER_LAUNCH_FAILED, a.launchFailure("Failed to launch container: ", err))
			return
		}
		ex.proc = proc
		a.checkpointLocked(ex)
		a.watchLocked(ex)
	}()
}

// launchFailure words a failed launch: prefix and err, and when the cause
// is a full file system (ENOSPC, or EDQUOT for a quota), that the agent's
// work dir is full, so operators see the cause at once.
func (a *Agent) launchFailure(prefix string, err error) string {
	msg := prefix + err.Error()
	switch {
	case errors.Is(err, syscall.ENOSPC) || strings.Contains(msg, syscall.ENOSPC.Error()):
		msg += " (the agent's work dir " + a.cfg.WorkDir + " is full)"
	case errors.Is(err, syscall.EDQUOT) || strings.Contains(msg, syscall.EDQUOT.Error()):
		msg += " (the agent's work dir " + a.cfg.WorkDir + " is over its disk quota)"
	}
	return msg
}

// fetch fetches uris into a sandbox, in order. Like Mesos' fetcher, whose
// output goes to the sandbox's stderr, it writes each URI it fetches there
// first — query and all: a credential in a fetch URL is readable by anyone
// who can read the sandbox, on Apache Mesos as here.
func (a *Agent) fetch(ctx context.Context, uris []mesos.CommandInfo_URI, sandbox string) error {
	if len(uris) == 0 {
		return nil
	}
	if err := os.MkdirAll(sandbox, 0o755); err != nil {
		return err
	}
	if f, err := os.OpenFile(filepath.Join(sandbox, "stderr"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
		for _, u := range uris {
			fmt.Fprintf(f, "I%s fetcher: Fetching URI '%s'\n", time.Now().UTC().Format("0102 15:04:05.000000"), u.Value)
		}
		f.Close()
	}
	return a.cfg.Fetch(ctx, uris, sandbox)
}

// fetchContextLocked is the context ex's fetch runs under: the agent's,
// cancelled too when ex is shut down (stopFetch).
func (a *Agent) fetchContextLocked(ex *execRun) context.Context {
	ctx, cancel := context.WithCancel(a.ctx)
	ex.stopFetch = cancel
	return ctx
}

// onExitLocked calls exited, with a.mu held, once ex's process has ended
// and its container is destroyed — unless the agent stops first.
func (a *Agent) onExitLocked(ex *execRun, exited func(st containerizer.Status)) {
	proc := ex.proc
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		select {
		case <-a.ctx.Done():
			return
		case <-proc.Done():
		}
		proc.Destroy()
		st := proc.Status()
		a.mu.Lock()
		defer a.mu.Unlock()
		if !a.closed {
			exited(st)
		}
	}()
}

// watchLocked waits for ex's process to end.
func (a *Agent) watchLocked(ex *execRun) {
	a.onExitLocked(ex, func(st containerizer.Status) {
		state, reason, msg := mesos.TASK_FAILED, mesos.REASON_EXECUTOR_TERMINATED, "Executor terminated"
		if ex.state == exTerminating {
			state = mesos.TASK_LOST
		}
		if ex.state == exLaunching && ex.regTimer == nil {
			reason, msg = mesos.REASON_EXECUTOR_REGISTRATION_TIMEOUT, "Executor did not register within "+containerizer.FormatDuration(a.cfg.RegistrationTimeout)
		}
		if st.Unknown {
			msg += " (exit status unknown after agent recovery)"
		}
		a.executorGoneLocked(ex, st, state, reason, msg)
	})
}

func (a *Agent) registrationTimeout(ex *execRun) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if ex.state != exLaunching || a.closed {
		return
	}
	ex.regTimer = nil
	a.log.WithField("executor", ex.info.ExecutorID.Value).Warn("agent: executor did not subscribe in time; destroying it")
	if ex.proc != nil {
		ex.proc.Kill(0)
	}
}

// executorGoneLocked ends an executor: its live tasks get an update, the
// master learns it exited, its sandbox is scheduled for GC.
func (a *Agent) executorGoneLocked(ex *execRun, st containerizer.Status, state mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) {
	if ex.state == exTerminated {
		return
	}
	ex.state = exTerminated
	ex.stopTimers()
	if ex.sub != nil {
		ex.sub.close()
		ex.sub = nil
	}
	for _, t := range ex.tasks {
		if !statusupdate.IsTerminal(t.state) {
			a.agentUpdateLocked(ex.fw, &ex.info.ExecutorID, t.info.TaskID, state, reason, msg)
		}
	}
	fw := ex.fw
	if fw.executors[ex.info.ExecutorID.Value] == ex {
		delete(fw.executors, ex.info.ExecutorID.Value)
	}
	a.removeCheckpointLocked(ex)
	a.sendLocked(link.AgentMessage{ExecutorExited: &link.ExecutorExited{FrameworkID: fw.id(), ExecutorID: ex.info.ExecutorID, Status: st.WaitStatus()}})
	a.scheduleGCLocked(ex.sandbox)
	a.forgetFrameworkLocked(fw)
}

// forgetFrameworkLocked drops fw once nothing of it is left on the agent,
// as Mesos' agent removes a framework whose last executor is gone and
// which has no pending task (Slave::removeExecutor → removeFramework).
// Executors register in fw.executors before their launch starts (fetch
// included), so no executor means no pending launch. A framework being
// shut down (ShutdownFramework) goes as soon as its last executor ended,
// its unacknowledged updates with it. One still registered stays until
// its updates are acknowledged too (Mesos keeps the terminated executor,
// and so the framework, until then; acknowledge calls this again); a
// later RunTask recreates it. Its checkpoint directory goes with it, so
// a restarted agent cannot recover it.
func (a *Agent) forgetFrameworkLocked(fw *framework) {
	id := fw.id().Value
	if len(fw.executors) > 0 || a.frameworks[id] != fw {
		return
	}
	if fw.removing {
		a.sum.RemoveFramework(id)
	} else if !a.sum.RemoveIdleFramework(id) {
		return
	}
	delete(a.frameworks, id)
	a.dropFrameworkCheckpointLocked(id)
	a.log.WithFields(logrus.Fields{"framework": id, "shut_down": fw.removing}).Info("agent: framework removed")
}

func (a *Agent) scheduleGCLocked(sandbox string) {
	var t *time.Timer
	t = time.AfterFunc(a.cfg.GCDelay, func() {
		a.mu.Lock()
		delete(a.gcTimers, t)
		a.mu.Unlock()
		_ = os.RemoveAll(sandbox)
		exDir := filepath.Dir(filepath.Dir(sandbox))
		if entries, err := os.ReadDir(filepath.Join(exDir, "runs")); err == nil && onlyLatest(entries) {
			_ = os.RemoveAll(exDir)
		}
	})
	a.gcTimers[t] = struct{}{}
}

func onlyLatest(entries []os.DirEntry) bool {
	for _, e := range entries {
		if e.Name() != "latest" {
			return false
		}
	}
	return true
}

// agentUpdateLocked generates a status update on the agent's behalf.
func (a *Agent) agentUpdateLocked(fw *framework, exID *mesos.ExecutorID, taskID mesos.TaskID, state mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) {
	st := mesos.TaskStatus{
		TaskID: taskID, State: state.Enum(), Source: mesos.SOURCE_AGENT.Enum(), Reason: reason.Enum(),
		Message: &msg, ExecutorID: exID, UUID: uuid.New(), Timestamp: now(),
	}
	a.updateLocked(fw, exID, st)
}

func now() *float64 {
	f := float64(time.Now().UnixNano()) / 1e9
	return &f
}

// updateLocked records a task's new state and queues the update.
func (a *Agent) updateLocked(fw *framework, exID *mesos.ExecutorID, st mesos.TaskStatus) (duplicate bool, err error) {
	if exID != nil {
		if ex := fw.executors[exID.Value]; ex != nil {
			if t := ex.tasks[st.TaskID.Value]; t != nil {
				t.state = *st.State
			}
		}
	}
	return a.sum.Update(link.StatusUpdate{FrameworkID: fw.id(), Status: st, ExecutorID: exID})
}

func (a *Agent) findTaskLocked(fwID, taskID string) (*framework, *execRun, *task) {
	fw := a.frameworks[fwID]
	if fw == nil {
		return nil, nil, nil
	}
	for _, ex := range fw.executors {
		if t := ex.tasks[taskID]; t != nil {
			return fw, ex, t
		}
	}
	return fw, nil, nil
}

func (a *Agent) killTask(k link.KillTask) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fw, ex, t := a.findTaskLocked(k.FrameworkID.Value, k.TaskID.Value)
	switch {
	case t == nil:
		if fw != nil {
			a.agentUpdateLocked(fw, nil, k.TaskID, mesos.TASK_LOST, mesos.REASON_TASK_UNKNOWN, "Task not found on agent")
		}
	case statusupdate.IsTerminal(t.state):
	case ex.command != nil:
		a.killCommandLocked(ex, k.KillPolicy)
	case ex.dflt != nil:
		a.killDefaultTaskLocked(ex, k.TaskID.Value, k.KillPolicy)
	case !t.launched:
		t.launched = true // never hand it to the executor
		a.agentUpdateLocked(fw, &ex.info.ExecutorID, k.TaskID, mesos.TASK_KILLED, mesos.REASON_TASK_KILLED_DURING_LAUNCH, "Killed before delivery to the executor")
		a.checkpointLocked(ex)
	case ex.sub != nil:
		ex.sub.push(&executor.Event{Type: executor.Event_KILL, Kill: &executor.Event_Kill{TaskID: k.TaskID, KillPolicy: k.KillPolicy}})
	default:
		a.log.WithField("task", k.TaskID.Value).Warn("agent: kill for a task whose executor is disconnected; will shut it down")
		a.shutdownExecutorLocked(ex)
	}
}

func (a *Agent) shutdownExecutor(fwID, exID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if fw := a.frameworks[fwID]; fw != nil {
		if ex := fw.executors[exID]; ex != nil {
			a.shutdownExecutorLocked(ex)
		}
	}
}

// shutdownExecutorLocked sends SHUTDOWN and kills the process tree after
// the executor's grace period (at once if it never subscribed).
func (a *Agent) shutdownExecutorLocked(ex *execRun) {
	if ex.state >= exTerminating {
		return
	}
	subscribed := ex.sub != nil || ex.state == exRunning
	ex.state = exTerminating
	if ex.stopFetch != nil {
		ex.stopFetch() // a launch still fetching ends now (its process, if any, is killed below)
	}
	if ex.command != nil {
		a.killCommandLocked(ex, nil)
		return
	}
	if ex.dflt != nil {
		a.shutdownDefaultLocked(ex)
		return
	}
	if ex.sub != nil {
		ex.sub.push(&executor.Event{Type: executor.Event_SHUTDOWN})
	}
	grace := a.cfg.ShutdownGrace
	if gp := ex.info.GetShutdownGracePeriod(); gp != nil && gp.Nanoseconds > 0 {
		grace = time.Duration(gp.Nanoseconds)
	}
	if !subscribed {
		grace = 0
	}
	kill := func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		if ex.proc != nil && ex.state != exTerminated {
			ex.proc.Kill(0)
		}
	}
	ex.killTimer = time.AfterFunc(grace, kill)
}

func (a *Agent) shutdownFramework(fwID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fw := a.frameworks[fwID]
	if fw == nil {
		// Nothing runs, but updates of its ended tasks may still wait
		// for an acknowledgement that will never come.
		a.sum.RemoveFramework(fwID)
		a.dropFrameworkCheckpointLocked(fwID)
		return
	}
	fw.removing = true
	for _, ex := range fw.executors {
		a.shutdownExecutorLocked(ex)
	}
	a.forgetFrameworkLocked(fw)
}

func (a *Agent) acknowledge(ack link.Acknowledge) {
	if err := a.sum.Acknowledge(ack.FrameworkID.Value, ack.TaskID.Value, ack.UUID); err != nil {
		a.log.WithError(err).Debug("agent: acknowledgement ignored")
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	fw, ex, t := a.findTaskLocked(ack.FrameworkID.Value, ack.TaskID.Value)
	if t != nil && statusupdate.IsTerminal(t.state) && len(a.sum.Pending(ack.FrameworkID.Value, ack.TaskID.Value)) == 0 {
		delete(ex.tasks, ack.TaskID.Value)
		a.checkpointLocked(ex)
	}
	if fw != nil {
		a.forgetFrameworkLocked(fw) // its last update may just have been acknowledged
	} else {
		// An update of a framework the agent does not run (a reconciliation
		// answer): nothing else keeps its streams.
		a.sum.RemoveIdleFramework(ack.FrameworkID.Value)
	}
}

func (a *Agent) frameworkMessage(m link.FrameworkMessage) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if fw := a.frameworks[m.FrameworkID.Value]; fw != nil {
		if ex := fw.executors[m.ExecutorID.Value]; ex != nil && ex.sub != nil {
			ex.sub.push(&executor.Event{Type: executor.Event_MESSAGE, Message: &executor.Event_Message{Data: m.Data}})
			return
		}
	}
	a.log.WithField("executor", m.ExecutorID.Value).Debug("agent: dropping framework message for an unknown or disconnected executor")
}
