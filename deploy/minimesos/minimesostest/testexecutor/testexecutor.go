// Package testexecutor is a custom Mesos executor written with mesos-go's
// executor library, shared by the agent tests and the minimesos
// integration tests. It has no binary of its own: a test binary is the
// executor, started again with Env=1 (TestMain calls RunIfChild first,
// and executors get Env=1 in their CommandInfo's environment).
//
// Behaviour per task data:
//   - "finish" sends RUNNING then FINISHED;
//   - "fail" sends RUNNING then FAILED;
//   - "run" sends RUNNING and waits for KILL (then KILLED) or for a
//     MESSAGE "finish:<task id>" (then FINISHED);
//   - "foreign" sends RUNNING, then an update for a task it does not own
//     ("not-mine", neither tracked nor resent), records the agent's answer
//     ("accepted" or the error) in the sandbox file "foreign", then sends
//     FINISHED;
//   - "hangup" sends RUNNING, then closes its subscription and stays alive,
//     never subscribing again (a hung executor), until it is killed.
//
// Any other data sends RUNNING only. Task groups (LAUNCH_GROUP) are run
// task by task the same way. Updates of one executor go out one at a time
// (RUNNING always before the terminal state) and nothing follows a task's
// terminal state. Every MESSAGE other than "finish:<task id>" is echoed
// back as "echo:<data>". SHUTDOWN makes it exit 0 at once without updates;
// ERROR ends the subscription. With checkpointing it re-subscribes after
// the agent goes away (until the recovery timeout), resending
// unacknowledged updates and the tasks not yet acknowledged terminal.
//
// Environment: TESTEXEC_JSON=1 selects the JSON codec (protobuf
// otherwise). TESTEXEC_MODE selects a degenerate executor: "crash" exits 2
// at start, "nosubscribe" never subscribes (sleeps an hour), "exit" exits 0
// at once (a raw fork/exec baseline for benchmarks).
package testexecutor

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/executor"
	"github.com/mesos/mesos-go/api/v1/lib/executor/calls"
	"github.com/mesos/mesos-go/api/v1/lib/executor/config"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpexec"
)

type state struct {
	sandbox string
	cli     calls.Sender

	mu      sync.Mutex // guards the maps below and serializes updates
	unacked map[string]executor.Call_Update
	tasks   map[mesos.TaskID]mesos.TaskInfo
	states  map[mesos.TaskID]mesos.TaskState

	hangup chan struct{} // closed by a "hangup" task once its RUNNING is sent
}

// Env is the environment variable that makes a test binary the executor:
// RunIfChild runs the executor and exits when it is "1".
const Env = "TESTEXEC_CHILD"

// RunIfChild runs the executor and exits the process when Env is "1";
// otherwise it returns at once. Call it first thing in TestMain.
func RunIfChild() {
	if os.Getenv(Env) != "1" {
		return
	}
	run()
	os.Exit(0)
}

func run() {
	switch os.Getenv("TESTEXEC_MODE") {
	case "exit":
		return
	case "crash":
		os.Exit(2)
	case "nosubscribe":
		time.Sleep(time.Hour)
		return
	}
	log.SetFlags(log.Lmicroseconds)
	cfg, err := config.FromEnv()
	if err != nil {
		log.Fatal(err)
	}
	codec := codecs.ByMediaType[codecs.MediaTypeProtobuf]
	if os.Getenv("TESTEXEC_JSON") == "1" {
		codec = codecs.ByMediaType[codecs.MediaTypeJSON]
	}
	cli := httpcli.New(httpcli.Endpoint("http://"+cfg.AgentEndpoint+"/api/v1/executor"), httpcli.Codec(codec))
	opts := executor.CallOptions{calls.Framework(cfg.FrameworkID), calls.Executor(cfg.ExecutorID)}
	s := &state{
		sandbox: cfg.Sandbox,
		cli:     calls.SenderWith(httpexec.NewSender(cli.Send), opts...),
		unacked: map[string]executor.Call_Update{},
		tasks:   map[mesos.TaskID]mesos.TaskInfo{},
		states:  map[mesos.TaskID]mesos.TaskState{},
		hangup:  make(chan struct{}),
	}
	subscriber := calls.SenderWith(httpexec.NewSender(cli.Send, httpcli.Close(true)), opts...)
	disconnected := time.Now()
	for {
		s.mu.Lock()
		var ups []executor.Call_Update
		for _, u := range s.unacked {
			ups = append(ups, u)
		}
		var ts []mesos.TaskInfo
		for _, t := range s.tasks {
			ts = append(ts, t)
		}
		s.mu.Unlock()
		resp, err := subscriber.Send(context.Background(), calls.NonStreaming(calls.Subscribe(ts, ups)))
		if err == nil {
			stop := make(chan struct{})
			go func() {
				select {
				case <-s.hangup:
					resp.Close()
				case <-stop:
				}
			}()
			err = loop(s, resp)
			close(stop)
			resp.Close()
			disconnected = time.Now()
		}
		log.Println("disconnected:", err)
		select {
		case <-s.hangup:
			log.Println("hung up; waiting to be killed")
			select {}
		default:
		}
		if !cfg.Checkpoint || time.Since(disconnected) > cfg.RecoveryTimeout {
			return
		}
		time.Sleep(min(cfg.SubscriptionBackoffMax, 50*time.Millisecond))
	}
}

func loop(s *state, d encoding.Decoder) error {
	for {
		var e executor.Event
		if err := d.Decode(&e); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		switch e.Type {
		case executor.Event_LAUNCH:
			launch(s, e.Launch.Task)
		case executor.Event_LAUNCH_GROUP:
			for _, t := range e.LaunchGroup.TaskGroup.Tasks {
				launch(s, t)
			}
		case executor.Event_KILL:
			go update(s, e.Kill.TaskID, mesos.TASK_KILLED)
		case executor.Event_ACKNOWLEDGED:
			s.mu.Lock()
			delete(s.unacked, string(e.Acknowledged.UUID))
			if st, ok := s.states[e.Acknowledged.TaskID]; ok && terminal(st) {
				delete(s.tasks, e.Acknowledged.TaskID)
			}
			s.mu.Unlock()
		case executor.Event_MESSAGE:
			go message(s, string(e.Message.Data))
		case executor.Event_SHUTDOWN:
			log.Println("shutdown")
			os.Exit(0)
		case executor.Event_ERROR:
			return errors.New("agent sent ERROR: " + e.Error.Message)
		}
	}
}

func terminal(st mesos.TaskState) bool {
	return st == mesos.TASK_FINISHED || st == mesos.TASK_FAILED || st == mesos.TASK_KILLED
}

func launch(s *state, t mesos.TaskInfo) {
	s.mu.Lock()
	s.tasks[t.TaskID] = t
	s.mu.Unlock()
	go func() {
		update(s, t.TaskID, mesos.TASK_RUNNING)
		switch string(t.Data) {
		case "finish":
			update(s, t.TaskID, mesos.TASK_FINISHED)
		case "fail":
			update(s, t.TaskID, mesos.TASK_FAILED)
		case "hangup":
			close(s.hangup)
		case "foreign":
			answer := "accepted"
			if err := foreign(s); err != nil {
				answer = err.Error()
			}
			_ = os.WriteFile(filepath.Join(s.sandbox, "foreign"), []byte(answer), 0o644)
			update(s, t.TaskID, mesos.TASK_FINISHED)
		}
	}()
}

func message(s *state, data string) {
	if id, ok := strings.CutPrefix(data, "finish:"); ok {
		update(s, mesos.TaskID{Value: id}, mesos.TASK_FINISHED)
		return
	}
	resp, err := s.cli.Send(context.Background(), calls.NonStreaming(calls.Message([]byte("echo:"+data))))
	if resp != nil {
		resp.Close()
	}
	if err != nil {
		log.Println("message:", err)
	}
}

func newUpdate(id mesos.TaskID, st mesos.TaskState) *executor.Call {
	uuid := make([]byte, 16)
	_, _ = rand.Read(uuid)
	return calls.Update(mesos.TaskStatus{TaskID: id, State: st.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(), UUID: uuid})
}

// update sends one status update; the update is kept until acknowledged
// and resent on re-subscription. Updates of one task are sent in order.
func update(s *state, id mesos.TaskID, st mesos.TaskState) {
	call := newUpdate(id, st)
	s.mu.Lock()
	defer s.mu.Unlock() // serializes updates: RUNNING always goes out before FINISHED
	if prev, ok := s.states[id]; ok && terminal(prev) {
		return
	}
	s.states[id] = st
	s.unacked[string(call.Update.Status.UUID)] = *call.Update
	if err := send(s, call); err != nil {
		log.Println("update:", err)
	}
}

// foreign sends a RUNNING update for a task this executor does not own,
// without keeping it, and returns the agent's answer.
func foreign(s *state) error {
	call := newUpdate(mesos.TaskID{Value: "not-mine"}, mesos.TASK_RUNNING)
	s.mu.Lock()
	defer s.mu.Unlock()
	err := send(s, call)
	if err != nil {
		log.Println("foreign update:", err)
	}
	return err
}

func send(s *state, call *executor.Call) error {
	resp, err := s.cli.Send(context.Background(), calls.NonStreaming(call))
	if resp != nil {
		resp.Close()
	}
	return err
}
