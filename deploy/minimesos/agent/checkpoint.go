package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/agent/containerizer"
	"github.com/flint-mesos/flint/deploy/minimesos/link"
)

// Checkpoints live under <work_dir>/meta, as in Mesos:
//
//	meta/slaves/latest                         the agent id
//	meta/slaves/<agent>/updates.json           unacknowledged updates of checkpointing frameworks
//	meta/slaves/<agent>/frameworks/<fw>/executors/<ex>/runs/<container>/run.json
//
// Every executor run is recorded (so a restarted agent can also kill the
// executors of non-checkpointing frameworks instead of orphaning them).

type runState struct {
	Framework   mesos.FrameworkInfo `json:"framework"`
	Executor    mesos.ExecutorInfo  `json:"executor"`
	ContainerID string              `json:"container_id"`
	Sandbox     string              `json:"sandbox"`
	Pid         int                 `json:"pid"`
	StartTime   uint64              `json:"start_time"`
	Command     *mesos.TaskInfo     `json:"command_task,omitempty"`
	Killed      bool                `json:"killed,omitempty"`
	Tasks       []taskState         `json:"tasks"`
}

type taskState struct {
	Info     mesos.TaskInfo  `json:"info"`
	State    mesos.TaskState `json:"state"`
	Launched bool            `json:"launched"`
	Group    bool            `json:"group,omitempty"`
}

func (a *Agent) metaDir() string { return filepath.Join(a.cfg.WorkDir, "meta", "slaves") }

func (a *Agent) runMetaDir(ex *execRun) string {
	return filepath.Join(a.metaDir(), a.agentID, "frameworks", ex.fw.id().Value, "executors", ex.info.ExecutorID.Value, "runs", ex.containerID)
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		_ = os.Remove(tmp) // a full disk keeps the last complete checkpoint
		return err
	}
	return os.Rename(tmp, path)
}

func (a *Agent) writeAgentID(id string) {
	if err := writeJSON(filepath.Join(a.metaDir(), "latest"), id); err != nil {
		a.log.WithError(err).Warn("agent: checkpointing agent id")
	}
}

// checkpointLocked records ex's run (no-op before its process exists
// and for terminated runs).
func (a *Agent) checkpointLocked(ex *execRun) {
	if ex.fw.info.GetCheckpoint() {
		a.ckptFW.Store(ex.fw.id().Value, true)
		a.ckptAny.Store(true)
	}
	if ex.state == exTerminated || a.agentID == "" {
		return
	}
	if !ex.fw.info.GetCheckpoint() {
		// Only the pid matters (to kill it after a restart): write once.
		if ex.proc == nil || ex.pidRecorded {
			return
		}
		ex.pidRecorded = true
	}
	rs := runState{Framework: ex.fw.info, Executor: ex.info, ContainerID: ex.containerID, Sandbox: ex.sandbox}
	if ex.proc != nil {
		rs.Pid, rs.StartTime = ex.proc.Pid(), ex.proc.StartTime()
	}
	if ex.command != nil {
		rs.Command, rs.Killed = &ex.command.info, ex.command.killed
	}
	for _, t := range ex.tasks {
		rs.Tasks = append(rs.Tasks, taskState{Info: t.info, State: t.state, Launched: t.launched, Group: t.group})
	}
	if err := writeJSON(filepath.Join(a.runMetaDir(ex), "run.json"), rs); err != nil {
		a.log.WithError(err).Warn("agent: checkpointing executor run")
	}
}

func (a *Agent) removeCheckpointLocked(ex *execRun) {
	if a.agentID != "" {
		_ = os.RemoveAll(filepath.Join(a.metaDir(), a.agentID, "frameworks", ex.fw.id().Value, "executors", ex.info.ExecutorID.Value))
	}
}

// dropFrameworkCheckpointLocked forgets a removed framework's checkpoint:
// its directory under meta (executor runs are removed as they end) and its
// mark as a checkpointing framework (its updates are gone).
func (a *Agent) dropFrameworkCheckpointLocked(id string) {
	a.ckptFW.Delete(id)
	if a.agentID != "" {
		_ = os.RemoveAll(filepath.Join(a.metaDir(), a.agentID, "frameworks", id))
	}
}

// checkpointUpdates saves the unacknowledged updates of checkpointing
// frameworks. Called by the status update manager without its lock (and
// possibly with a.mu held: it must not take a.mu).
func (a *Agent) checkpointUpdates() {
	id, _ := a.ckptAgent.Load().(string)
	if id == "" || !a.ckptAny.Load() {
		return
	}
	var keep []link.StatusUpdate
	for _, u := range a.sum.Snapshot() {
		if _, ok := a.ckptFW.Load(u.FrameworkID.Value); ok {
			keep = append(keep, u)
		}
	}
	a.ckptMu.Lock()
	defer a.ckptMu.Unlock()
	if len(keep) == 0 && !a.ckptWritten {
		return
	}
	a.ckptWritten = true
	if err := writeJSON(filepath.Join(a.metaDir(), id, "updates.json"), keep); err != nil {
		a.log.WithError(err).Warn("agent: checkpointing status updates")
	}
}

// recover rebuilds state from the work dir: executors of checkpointing
// frameworks whose process still runs are re-attached and must
// re-subscribe within ReregistrationTimeout; others are killed.
func (a *Agent) recover() error {
	var id string
	b, err := os.ReadFile(filepath.Join(a.metaDir(), "latest"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil || json.Unmarshal(b, &id) != nil || containerizer.CheckID("agent", id) != nil {
		return fmt.Errorf("agent: corrupt checkpoint %s: %v", filepath.Join(a.metaDir(), "latest"), err)
	}
	if a.agentID == "" {
		a.agentID = id
	}
	if a.agentID != id {
		return nil
	}
	a.ckptAgent.Store(id)
	runs, _ := filepath.Glob(filepath.Join(a.metaDir(), id, "frameworks", "*", "executors", "*", "runs", "*", "run.json"))
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, path := range runs {
		var rs runState
		if b, err := os.ReadFile(path); err != nil || json.Unmarshal(b, &rs) != nil || rs.Framework.ID == nil {
			a.log.WithField("path", path).Warn("agent: skipping unreadable checkpoint")
			continue
		}
		a.recoverRunLocked(rs)
	}
	a.recoverUpdatesLocked(filepath.Join(a.metaDir(), id, "updates.json"))
	return nil
}

// recoverUpdatesLocked queues the checkpointed unacknowledged updates
// again, in order, to be resent once the agent registers — also those of
// frameworks with no executor left (a task that ended before the restart).
func (a *Agent) recoverUpdatesLocked(path string) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var ups []link.StatusUpdate
	if err == nil {
		err = json.Unmarshal(b, &ups)
	}
	if err != nil {
		a.log.WithError(err).WithField("path", path).Warn("agent: unreadable status update checkpoint; its updates are lost")
		return
	}
	for _, u := range ups {
		a.ckptFW.Store(u.FrameworkID.Value, true)
		a.ckptAny.Store(true)
		if fw := a.frameworks[u.FrameworkID.Value]; fw != nil {
			_, err = a.updateLocked(fw, u.ExecutorID, u.Status)
		} else {
			_, err = a.sum.Update(u)
		}
		if err != nil {
			a.log.WithError(err).WithField("task", u.Status.TaskID.Value).Warn("agent: dropping a checkpointed status update")
		}
	}
}

func (a *Agent) recoverRunLocked(rs runState) {
	proc, err := containerizer.Adopt(rs.Pid, rs.StartTime, a.cfg.PollInterval)
	log := a.log.WithField("executor", rs.Executor.ExecutorID.Value)
	if !rs.Framework.GetCheckpoint() {
		if err == nil {
			log.Info("agent: killing executor of a non-checkpointing framework after restart")
			proc.Kill(0)
			proc.Release()
		}
		_ = os.RemoveAll(filepath.Dir(filepath.Dir(runMetaPath(a.metaDir(), a.agentID, rs))))
		return
	}
	fw := a.frameworks[rs.Framework.ID.Value]
	if fw == nil {
		fw = &framework{info: rs.Framework, executors: map[string]*execRun{}}
		a.frameworks[rs.Framework.ID.Value] = fw
		a.ckptFW.Store(rs.Framework.ID.Value, true)
		a.ckptAny.Store(true)
	}
	ex := &execRun{fw: fw, info: rs.Executor, containerID: rs.ContainerID, sandbox: rs.Sandbox, tasks: map[string]*task{}, recovered: true}
	for _, t := range rs.Tasks {
		ex.tasks[t.Info.TaskID.Value] = &task{info: t.Info, state: t.State, launched: t.Launched, group: t.Group}
	}
	fw.executors[rs.Executor.ExecutorID.Value] = ex
	if rs.Command != nil {
		ex.command = &commandTask{info: *rs.Command, killed: rs.Killed}
	}
	if err != nil {
		log.Info("agent: checkpointed executor is gone")
		a.executorGoneLocked(ex, containerizer.Status{Unknown: true}, mesos.TASK_FAILED, mesos.REASON_EXECUTOR_TERMINATED,
			"Executor terminated while the agent was down")
		return
	}
	ex.proc = proc
	log.Info("agent: re-attached to executor")
	if ex.command != nil {
		ex.state = exRunning
		a.watchCommandLocked(ex)
		return
	}
	ex.state = exLaunching
	ex.regTimer = time.AfterFunc(a.cfg.ReregistrationTimeout, func() { a.registrationTimeout(ex) })
	a.watchLocked(ex)
}

func runMetaPath(meta, agentID string, rs runState) string {
	return filepath.Join(meta, agentID, "frameworks", rs.Framework.ID.Value, "executors", rs.Executor.ExecutorID.Value, "runs", rs.ContainerID)
}
