package fineexec

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mexec "github.com/mesos/mesos-go/api/v1/lib/executor"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/executor/files"
	"github.com/flint-mesos/flint/framework/config/jobconf"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/internal/localip"
	"github.com/flint-mesos/flint/proto/flintpb"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
)

// events handles one subscription's events until it ends.
func (e *Executor) events(resp mesos.Response) error {
	for {
		var ev mexec.Event
		if err := resp.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return errors.New("fine: the agent closed the subscription")
			}
			return err
		}
		switch ev.GetType() {
		case mexec.Event_SUBSCRIBED:
			if err := e.subscribed(ev.Subscribed); err != nil {
				e.finish(err, "")
				return err
			}
		case mexec.Event_LAUNCH:
			e.launch(ev.Launch.Task)
		case mexec.Event_LAUNCH_GROUP:
			for _, t := range ev.LaunchGroup.TaskGroup.Tasks {
				e.launch(t)
			}
		case mexec.Event_KILL:
			e.kill(ev.Kill.TaskID)
		case mexec.Event_ACKNOWLEDGED:
			e.acknowledged(ev.Acknowledged.TaskID, ev.Acknowledged.UUID)
		case mexec.Event_SHUTDOWN:
			e.finish(nil, "the agent asked the executor to shut down")
		case mexec.Event_ERROR:
			e.log.Errorf("fine: the agent sent ERROR: %s", ev.Error.GetMessage())
		case mexec.Event_MESSAGE:
			e.message(ev.Message.GetData())
		case mexec.Event_HEARTBEAT:
		default:
			e.log.Debugf("fine: ignoring event %s", ev.GetType())
		}
	}
}

// subscribed sets the executor up on the first SUBSCRIBED event.
func (e *Executor) subscribed(s *mexec.Event_Subscribed) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.rt != nil {
		e.log.Info("fine: re-subscribed with the agent")
		return nil
	}
	set, err := DecodeSettings(s.ExecutorInfo.GetData())
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadSettings, err)
	}
	sh, err := e.startShuffle(set, s.AgentInfo.GetHostname())
	if err != nil {
		return err
	}
	job, err := set.Job.Config()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadSettings, err)
	}
	jobconf.LogEffective(e.log, job)
	rc := executor.Config{
		ExecutorID: e.cfg.Mesos.ExecutorID, Cores: runtimeCores, TaskCPUs: set.TaskCPUs, Job: job,
		MaxResultSize: set.MaxResultSize, MaxDirectResultSize: max(set.MaxDirectResultSize, 1),
		Registry: e.cfg.Registry, Logger: e.log, FilesDir: files.SandboxDir(),
	}
	var env *stagetask.Env
	if sh != nil {
		// the application's runtime state on this executor, handed to
		// every task; Run closes it before the shuffle
		env = stagetask.NewEnv(sh)
		base := stagetask.NewContext(context.Background(), env)
		rc.BaseContext = func() context.Context { return base }
	}
	rt, err := executor.New(rc, e.report)
	if err != nil {
		closeShuffle(sh)
		return fmt.Errorf("fine: runtime: %w", err)
	}
	rs, err := startResultServer(set, rt, e.log, s.AgentInfo.GetHostname())
	if err != nil {
		_ = rt.Close(nilCtx())
		closeShuffle(sh)
		return err
	}
	e.set, e.rt, e.results, e.shuffle, e.env = set, rt, rs, sh, env
	e.lastActive = e.cfg.Clock.Now()
	if set.IdleTimeout > 0 {
		go e.idleWatch(set.IdleTimeout)
	}
	e.log.Infof("fine: subscribed to agent %s (%s) for driver %s; results served at %s",
		s.AgentInfo.GetID().GetValue(), s.AgentInfo.GetHostname(), set.DriverID, rs.url)
	return nil
}

// launch runs one Mesos task.
func (e *Executor) launch(t mesos.TaskInfo) {
	id := t.TaskID.Value
	e.mu.Lock()
	if e.tasks[id] != nil {
		e.mu.Unlock()
		e.log.Debugf("fine: task %s launched twice; ignoring the second LAUNCH", id)
		return
	}
	ent := &taskEntry{info: t}
	e.tasks[id] = ent
	e.lastActive = e.cfg.Clock.Now()
	closing, rt := e.closing, e.rt
	e.mu.Unlock()
	if closing || rt == nil {
		e.fail(id, mesos.TASK_LOST, mesos.REASON_EXECUTOR_TERMINATED, &flintpb.StatusUpdate{State: flintpb.TaskState_TASK_LOST,
			Failure: &flintpb.TaskFailure{Kind: flintpb.FailureKind_EXECUTOR_LOST, Message: "the executor is exiting"}})
		return
	}
	var td flintpb.TaskDescription
	err := td.Unmarshal(t.Data)
	if err == nil && td.Function == "" {
		err = errors.New("the description names no function")
	}
	if err != nil {
		e.fail(id, mesos.TASK_FAILED, mesos.REASON_TASK_INVALID, &flintpb.StatusUpdate{State: flintpb.TaskState_TASK_FAILED,
			Failure: &flintpb.TaskFailure{Kind: flintpb.FailureKind_DECODE_ERROR, Message: fmt.Sprintf("fine: task %s: data is not a Flint task description (%d bytes): %v", id, len(t.Data), err)}})
		return
	}
	td.ExecutorId = e.cfg.Mesos.ExecutorID
	e.mu.Lock()
	ent.flintID, ent.inRT = td.TaskId, true
	e.byFlint[td.TaskId] = id
	e.mu.Unlock()
	if err := rt.Launch(&td); err != nil {
		e.mu.Lock()
		ent.inRT = false
		delete(e.byFlint, td.TaskId)
		e.mu.Unlock()
		st, kind := mesos.TASK_FAILED, flintpb.FailureKind_LAUNCH_FAILED
		fs := flintpb.TaskState_TASK_FAILED
		if errors.Is(err, executor.ErrClosed) {
			st, kind, fs = mesos.TASK_LOST, flintpb.FailureKind_EXECUTOR_LOST, flintpb.TaskState_TASK_LOST
		}
		e.fail(id, st, mesos.REASON_EXECUTOR_TERMINATED, &flintpb.StatusUpdate{TaskId: td.TaskId, Attempt: td.Attempt, State: fs,
			Failure: &flintpb.TaskFailure{Kind: kind, Message: fmt.Sprintf("fine: task %s: %v", id, err)}})
	}
}

// fail sends a terminal update for a task that never ran.
func (e *Executor) fail(id string, st mesos.TaskState, reason mesos.TaskStatus_Reason, u *flintpb.StatusUpdate) {
	u.ExecutorId = e.cfg.Mesos.ExecutorID
	u.TimestampUnixNano = e.cfg.Clock.Now().UnixNano()
	data, _ := u.Marshal()
	msg := ""
	if u.Failure != nil {
		msg = u.Failure.Message
	}
	e.log.Warn(msg)
	e.queue(mesos.TaskStatus{TaskID: mesos.TaskID{Value: id}, State: st.Enum(), Reason: reason.Enum(), Message: &msg, Data: data})
}

// report turns the runtime's updates into Mesos updates.
func (e *Executor) report(u *flintpb.StatusUpdate) {
	e.mu.Lock()
	id, ok := e.byFlint[u.TaskId]
	var url, pin string
	if e.results != nil {
		url, pin = e.results.url, e.results.pin
	}
	if ok && u.State != flintpb.TaskState_TASK_RUNNING {
		delete(e.byFlint, u.TaskId)
		if t := e.tasks[id]; t != nil {
			t.inRT = false
		}
		e.lastActive = e.cfg.Clock.Now()
	}
	e.mu.Unlock()
	if !ok {
		e.log.Warnf("fine: the runtime reported unknown task %d", u.TaskId)
		return
	}
	status := mesos.TaskStatus{TaskID: mesos.TaskID{Value: id}}
	switch u.State {
	case flintpb.TaskState_TASK_RUNNING:
		status.State = mesos.TASK_RUNNING.Enum()
		e.queue(status)
		return
	case flintpb.TaskState_TASK_FINISHED:
		status.State = mesos.TASK_FINISHED.Enum()
	case flintpb.TaskState_TASK_KILLED:
		status.State = mesos.TASK_KILLED.Enum()
	case flintpb.TaskState_TASK_LOST:
		status.State = mesos.TASK_LOST.Enum()
	default:
		status.State = mesos.TASK_FAILED.Enum()
	}
	if f := u.GetFailure(); f != nil {
		msg := f.Kind.String() + ": " + f.Message
		status.Message = &msg
	}
	if u.GetResult().GetIndirect() != nil {
		status.Labels = &mesos.Labels{Labels: []mesos.Label{{Key: contract.LabelResults, Value: &url}}}
		if pin != "" {
			status.Labels.Labels = append(status.Labels.Labels, mesos.Label{Key: contract.LabelResultsPin, Value: &pin})
		}
	}
	data, err := u.Marshal()
	if err != nil {
		e.log.WithError(err).Errorf("fine: encode the update of task %s", id)
	}
	status.Data = data
	e.queue(status)
}

// kill kills a running task; a task the executor does not run is ignored
// (its terminal update is already on its way, or it never arrived).
func (e *Executor) kill(id mesos.TaskID) {
	e.mu.Lock()
	t := e.tasks[id.Value]
	rt := e.rt
	e.mu.Unlock()
	if t == nil || !t.inRT || rt == nil {
		e.log.Debugf("fine: KILL for task %s, which is not running here", id.Value)
		return
	}
	rt.Kill(t.flintID, "killed through Mesos")
}

// acknowledged drops an acknowledged update, and the task with its
// terminal update.
func (e *Executor) acknowledged(id mesos.TaskID, uuid []byte) {
	e.mu.Lock()
	delete(e.unacked, string(uuid))
	if t := e.tasks[id.Value]; t != nil && t.terminal != nil && string(t.terminal) == string(uuid) {
		delete(e.tasks, id.Value)
		e.lastActive = e.cfg.Clock.Now()
	}
	e.mu.Unlock()
	select {
	case e.ackCh <- struct{}{}:
	default:
	}
}

// idleWatch ends the executor once it had no task for d.
func (e *Executor) idleWatch(d time.Duration) {
	tick := e.cfg.Clock.NewTicker(min(max(d/4, 10*time.Millisecond), time.Second))
	defer tick.Stop()
	for {
		select {
		case <-e.quit:
			return
		case <-tick.C():
		}
		e.mu.Lock()
		idle := len(e.tasks) == 0 && len(e.unacked) == 0 && e.cfg.Clock.Now().Sub(e.lastActive) >= d
		if idle && e.shuffle != nil && e.shuffle.HoldsOutputs() {
			// Reducers may still read the outputs this executor wrote:
			// it stays until the driver releases them (or goes away).
			if !e.heldLogged {
				e.log.Infof("fine: idle for %s but holding shuffle outputs; staying until the driver releases them", d)
				e.heldLogged = true
			}
			idle = false
		}
		if idle {
			e.closing = true // decided under the lock: a LAUNCH from now on is answered TASK_LOST
		}
		e.mu.Unlock()
		if idle {
			e.finish(nil, fmt.Sprintf("no task for %s (flint.mesos.fine.executorIdleTimeout)", d))
			return
		}
	}
}

// startShuffle starts the executor's shuffle when the settings carry one:
// reported at the agent's host name, listening on the address that routes
// to the driver.
func (e *Executor) startShuffle(set Settings, agentHost string) (*shuffleenv.Env, error) {
	ss, ok, err := shuffleenv.SettingsFromWire(set.Shuffle, e.cfg.Mesos.ExecutorID, agentHost)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSettings, err)
	}
	if !ok {
		return nil, nil
	}
	ss.Host = cmp.Or(ss.Host, "127.0.0.1")
	ss.Bind = localip.TowardsOrEmpty(set.DriverHost)
	if err := ss.FromContainer(os.Getenv); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSettings, err)
	}
	sh, err := shuffleenv.Start(ss, true, e.log)
	if err != nil {
		// Tasks that shuffle fail (no shuffle in their context); the
		// others run.
		e.log.WithError(err).Error("fine: cannot start the executor's shuffle")
		return nil, nil
	}
	e.log.Infof("fine: serving shuffle outputs at %s", sh.Location().Address)
	return sh, nil
}

func closeShuffle(sh *shuffleenv.Env) {
	if sh != nil {
		_ = sh.Close()
	}
}

// message handles a framework message from the driver: a shuffle release
// deletes that shuffle's outputs (and may let the executor exit on idle).
func (e *Executor) message(data []byte) {
	ns, id, all, ok := contract.ParseShuffleReleaseMessage(data)
	e.mu.Lock()
	sh, env := e.shuffle, e.env
	e.mu.Unlock()
	if !ok || sh == nil {
		e.log.Debugf("fine: ignoring a framework message of %d bytes", len(data))
		return
	}
	// the application's environment drops the shuffle's map statuses too
	release := sh.ReleaseShuffle
	if env != nil {
		release = env.ReleaseShuffle
	}
	if err := release(ns, id, all); err != nil {
		e.log.WithError(err).Warnf("fine: releasing shuffle %d of namespace %q (all: %v)", id, ns, all)
		return
	}
	e.mu.Lock()
	e.heldLogged = false
	e.mu.Unlock()
	if ns == "" {
		e.log.Infof("fine: released shuffle %d", id)
	} else {
		e.log.Infof("fine: released shuffle outputs of namespace %s (shuffle %d, all: %v)", ns, id, all)
	}
}
