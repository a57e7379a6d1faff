// Command executor is a custom Mesos executor written with mesos-go's
// executor library for the minimesos integration tests. Per task data:
// "finish" sends RUNNING then FINISHED; "fail" RUNNING then FAILED; "run"
// sends RUNNING and waits for KILL (then KILLED) or for a MESSAGE
// "finish:<task id>" (then FINISHED). Every other MESSAGE is echoed back as
// "echo:<data>". SHUTDOWN makes it exit at once without updates. Task
// groups (LAUNCH_GROUP) are run task by task the same way. With
// checkpointing it re-subscribes after the agent goes away, resending
// unacknowledged updates and tasks. TESTEXEC_JSON=1 selects the JSON codec.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log"
	"os"
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
	mu      sync.Mutex
	cli     calls.Sender
	unacked map[string]executor.Call_Update
	tasks   map[mesos.TaskID]mesos.TaskInfo
	states  map[mesos.TaskID]mesos.TaskState
}

func main() {
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
		cli:     calls.SenderWith(httpexec.NewSender(cli.Send), opts...),
		unacked: map[string]executor.Call_Update{},
		tasks:   map[mesos.TaskID]mesos.TaskInfo{},
		states:  map[mesos.TaskID]mesos.TaskState{},
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
			err = loop(s, resp)
			resp.Close()
			disconnected = time.Now()
		}
		log.Println("disconnected:", err)
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

// update sends one status update; the update is kept until acknowledged
// and resent on re-subscription. Updates of one task are sent in order.
func update(s *state, id mesos.TaskID, st mesos.TaskState) {
	uuid := make([]byte, 16)
	_, _ = rand.Read(uuid)
	status := mesos.TaskStatus{TaskID: id, State: st.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(), UUID: uuid}
	call := calls.Update(status)
	s.mu.Lock()
	defer s.mu.Unlock() // serializes updates: RUNNING always goes out before FINISHED
	if prev, ok := s.states[id]; ok && terminal(prev) {
		return
	}
	s.states[id] = st
	s.unacked[string(uuid)] = *call.Update
	resp, err := s.cli.Send(context.Background(), calls.NonStreaming(call))
	if resp != nil {
		resp.Close()
	}
	if err != nil {
		log.Println("update:", err)
	}
}
