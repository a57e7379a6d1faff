// Command testexecutor is a custom Mesos executor written with mesos-go's
// executor library, used by the agent's tests. Behaviour per task data:
// "finish" sends RUNNING then FINISHED; "run" sends RUNNING and waits for
// KILL (then KILLED); "foreign" also sends an update for a task it does
// not own and records the answer in the sandbox file "foreign". Mode by
// TESTEXEC_MODE: "crash" exits 2 at start, "nosubscribe" never subscribes,
// "exit" exits 0 at once (raw fork/exec baseline).
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log"
	"os"
	"path/filepath"
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
	cfg     config.Config
	cli     calls.Sender
	info    mesos.ExecutorInfo
	unacked map[string]executor.Call_Update
	tasks   map[mesos.TaskID]mesos.TaskInfo
	quit    bool
}

func main() {
	switch os.Getenv("TESTEXEC_MODE") {
	case "exit":
		return
	case "crash":
		os.Exit(2)
	case "nosubscribe":
		time.Sleep(time.Hour)
		return
	}
	cfg, err := config.FromEnv()
	if err != nil {
		log.Fatal(err)
	}
	http := httpcli.New(httpcli.Endpoint("http://"+cfg.AgentEndpoint+"/api/v1/executor"), httpcli.Codec(codecFor()))
	opts := executor.CallOptions{calls.Framework(cfg.FrameworkID), calls.Executor(cfg.ExecutorID)}
	s := &state{cfg: cfg, cli: calls.SenderWith(httpexec.NewSender(http.Send), opts...),
		unacked: map[string]executor.Call_Update{}, tasks: map[mesos.TaskID]mesos.TaskInfo{}}
	subscriber := calls.SenderWith(httpexec.NewSender(http.Send, httpcli.Close(true)), opts...)
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
		if s.quit || !cfg.Checkpoint || time.Since(disconnected) > cfg.RecoveryTimeout {
			return
		}
		time.Sleep(min(cfg.SubscriptionBackoffMax, 100*time.Millisecond))
	}
}

func codecFor() encoding.Codec {
	if os.Getenv("TESTEXEC_JSON") == "1" {
		return codecs.ByMediaType[codecs.MediaTypeJSON]
	}
	return codecs.ByMediaType[codecs.MediaTypeProtobuf]
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
		case executor.Event_SUBSCRIBED:
			s.info = e.Subscribed.ExecutorInfo
		case executor.Event_LAUNCH:
			s.mu.Lock()
			s.tasks[e.Launch.Task.TaskID] = e.Launch.Task
			s.mu.Unlock()
			go launch(s, e.Launch.Task)
		case executor.Event_KILL:
			go update(s, e.Kill.TaskID, mesos.TASK_KILLED)
		case executor.Event_ACKNOWLEDGED:
			s.mu.Lock()
			delete(s.unacked, string(e.Acknowledged.UUID))
			delete(s.tasks, e.Acknowledged.TaskID)
			s.mu.Unlock()
		case executor.Event_MESSAGE:
			_ = os.WriteFile(filepath.Join(s.cfg.Sandbox, "message"), e.Message.Data, 0o644)
			resp, err := s.cli.Send(context.Background(), calls.NonStreaming(calls.Message(e.Message.Data)))
			if resp != nil {
				resp.Close()
			}
			if err != nil {
				log.Println("message:", err)
			}
		case executor.Event_SHUTDOWN:
			s.quit = true
			os.Exit(0)
		case executor.Event_ERROR:
			return errors.New("agent sent ERROR")
		}
	}
}

func launch(s *state, t mesos.TaskInfo) {
	update(s, t.TaskID, mesos.TASK_RUNNING)
	switch string(t.Data) {
	case "finish":
		update(s, t.TaskID, mesos.TASK_FINISHED)
	case "foreign":
		err := update(s, mesos.TaskID{Value: "not-mine"}, mesos.TASK_RUNNING)
		msg := "accepted"
		if err != nil {
			msg = err.Error()
		}
		_ = os.WriteFile(filepath.Join(s.cfg.Sandbox, "foreign"), []byte(msg), 0o644)
		update(s, t.TaskID, mesos.TASK_FINISHED)
	}
}

func update(s *state, id mesos.TaskID, st mesos.TaskState) error {
	uuid := make([]byte, 16)
	_, _ = rand.Read(uuid)
	status := mesos.TaskStatus{TaskID: id, State: st.Enum(), Source: mesos.SOURCE_EXECUTOR.Enum(), UUID: uuid}
	call := calls.Update(status)
	s.mu.Lock()
	if id.Value != "not-mine" {
		s.unacked[string(uuid)] = *call.Update
	}
	s.mu.Unlock()
	resp, err := s.cli.Send(context.Background(), calls.NonStreaming(call))
	if resp != nil {
		resp.Close()
	}
	if err != nil {
		log.Println("update:", err)
	}
	return err
}
