package agent

import (
	"cmp"
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

// writeJSON checkpoints v at path so that a crash at any point leaves
// either the previous complete file or the new one, as Mesos' checkpoints
// do: the content is written to a temporary file and synced, renamed over
// path, and the directory (with every directory this call created, and
// the existing one that holds them) synced so the rename survives too.
func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeJSONBytes(path, b)
}

// testHookCheckpointWrite, if set (tests only), runs before each
// checkpoint file is written.
var testHookCheckpointWrite func(path string)

// writeJSONBytes is writeJSON of an encoded value.
func writeJSONBytes(path string, b []byte) error {
	if testHookCheckpointWrite != nil {
		testHookCheckpointWrite(path)
	}
	dir := filepath.Dir(path)
	top := dir // the highest directory this call creates, or dir
	for p := dir; ; {
		if _, err := os.Stat(p); err == nil {
			break
		}
		top = p
		parent := filepath.Dir(p)
		if parent == p {
			break
		}
		p = parent
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := writeSynced(tmp, b); err != nil {
		_ = os.Remove(tmp) // a full disk keeps the last complete checkpoint
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	for p := dir; ; p = filepath.Dir(p) {
		if err := syncDir(p); err != nil {
			return err
		}
		if p == top {
			if top != dir {
				return syncDir(filepath.Dir(top)) // it gained top's entry
			}
			return nil
		}
	}
}

// writeSynced writes b to a new file at path and syncs it to disk.
func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// syncDir syncs a directory's entries (a rename or a new file in it).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

func (a *Agent) writeAgentID(id string) {
	if err := writeJSON(filepath.Join(a.metaDir(), "latest"), id); err != nil {
		a.log.WithError(err).Warn("agent: checkpointing agent id")
	}
}

// checkpointLocked records ex's run (no-op before its process exists
// and for terminated runs). The record is encoded here and written by
// a.ckpt, after a.mu is released.
func (a *Agent) checkpointLocked(ex *execRun) {
	if ex.fw.info.GetCheckpoint() {
		a.ckptFW.Store(ex.fw.id().Value, true)
		a.ckptAny.Store(true)
	}
	if ex.state == exTerminated || a.agentID == "" {
		return
	}
	rs := runState{Framework: ex.fw.info, Executor: ex.info, ContainerID: ex.containerID, Sandbox: ex.sandbox}
	if ex.proc != nil {
		rs.Pid, rs.StartTime = ex.proc.Pid(), ex.proc.StartTime()
	}
	if !ex.fw.info.GetCheckpoint() {
		// Only the process matters (a restarted agent kills it and removes
		// the run): written once, without the tasks. Their TaskInfos carry
		// the tasks' data, and encoding megabytes of it under a.mu stalled
		// the agent for seconds on a loaded machine (pings unanswered, an
		// executor's SUBSCRIBE past its 5 s header timeout).
		if ex.proc == nil || ex.pidRecorded {
			return
		}
		ex.pidRecorded = true
		a.queueRunRecordLocked(ex, rs)
		return
	}
	if ex.command != nil {
		rs.Command, rs.Killed = &ex.command.info, ex.command.killed
	}
	for _, t := range ex.tasks {
		info := t.info
		if t.launched {
			// The executor has the data; recovery only re-sends tasks not yet
			// launched. Rewriting it on every status update would encode
			// megabytes under a.mu for tasks with large inputs.
			info.Data = nil
		}
		rs.Tasks = append(rs.Tasks, taskState{Info: info, State: t.state, Launched: t.launched, Group: t.group})
	}
	a.queueRunRecordLocked(ex, rs)
}

func (a *Agent) queueRunRecordLocked(ex *execRun, rs runState) {
	b, err := json.Marshal(rs)
	if err != nil {
		a.log.WithError(err).Warn("agent: checkpointing executor run")
		return
	}
	a.ckpt.write(filepath.Join(a.runMetaDir(ex), "run.json"), b)
}

func (a *Agent) removeCheckpointLocked(ex *execRun) {
	if a.agentID != "" {
		a.ckpt.removeAll(filepath.Join(a.metaDir(), a.agentID, "frameworks", ex.fw.id().Value, "executors", ex.info.ExecutorID.Value))
	}
}

// dropFrameworkCheckpointLocked forgets a removed framework's checkpoint:
// its directory under meta (executor runs are removed as they end) and its
// mark as a checkpointing framework (its updates are gone).
func (a *Agent) dropFrameworkCheckpointLocked(id string) {
	a.ckptFW.Delete(id)
	if a.agentID != "" {
		a.ckpt.removeAll(filepath.Join(a.metaDir(), a.agentID, "frameworks", id))
	}
}

// checkpointUpdates saves the unacknowledged updates of checkpointing
// frameworks. a.ckpt calls it, without a.mu (which it must not take),
// when the status update manager's streams changed.
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
	// An empty list is written once, and after a non-empty one: the
	// change that called for this write may concern an update already
	// acknowledged (writes run after the change), and the file must still
	// say that nothing is pending.
	if len(keep) == 0 && a.ckptEmpty {
		return
	}
	a.ckptEmpty = len(keep) == 0
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
	a.agentID = cmp.Or(a.agentID, id)
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
