package master_test

import (
	"context"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/flint-mesos/flint/deploy/minimesos/minimesostest"
)

var allCodecs = []encoding.Codec{codecs.ByMediaType[codecs.MediaTypeProtobuf], codecs.ByMediaType[codecs.MediaTypeJSON]}

// sched is a mesos-go scheduler client subscribed to a test master.
type sched struct {
	t      testing.TB
	caller calls.Caller
	id     string
	events chan *scheduler.Event
	done   chan struct{}
	cancel context.CancelFunc
	resp   mesos.Response
}

func newCaller(url string, codec encoding.Codec, cfg ...httpcli.ConfigOpt) calls.Caller {
	cfg = append(cfg, httpcli.Timeout(10*time.Second))
	cli := httpcli.New(httpcli.Endpoint(url), httpcli.Codec(codec), httpcli.Do(httpcli.With(cfg...)))
	return httpsched.NewCaller(cli, httpsched.AllowReconnection(true))
}

func frameworkInfo(name string, caps ...mesos.FrameworkInfo_Capability_Type) *mesos.FrameworkInfo {
	fi := &mesos.FrameworkInfo{User: "tester", Name: name}
	for _, c := range caps {
		fi.Capabilities = append(fi.Capabilities, mesos.FrameworkInfo_Capability{Type: c})
	}
	return fi
}

func subscribe(t testing.TB, s *minimesostest.Server, codec encoding.Codec, fi *mesos.FrameworkInfo, cfg ...httpcli.ConfigOpt) *sched {
	t.Helper()
	c := &sched{t: t, caller: newCaller(s.SchedulerURL(), codec, cfg...), events: make(chan *scheduler.Event, 1000), done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	resp, err := c.caller.Call(ctx, calls.Subscribe(fi))
	if err != nil {
		cancel()
		t.Fatalf("subscribe: %v", err)
	}
	c.resp = resp
	go func() {
		defer close(c.done)
		defer close(c.events)
		for {
			var e scheduler.Event
			if err := resp.Decode(&e); err != nil {
				return
			}
			c.events <- &e
		}
	}()
	e := c.next(scheduler.Event_SUBSCRIBED)
	c.id = e.Subscribed.FrameworkID.Value
	t.Cleanup(c.close)
	return c
}

func (c *sched) close() {
	c.cancel()
	if c.resp != nil {
		c.resp.Close()
	}
	<-c.done
}

// next returns the next event of type typ, skipping heartbeats and others.
func (c *sched) next(typ scheduler.Event_Type) *scheduler.Event {
	c.t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case e, ok := <-c.events:
			if !ok {
				c.t.Fatalf("stream closed waiting for %v", typ)
			}
			if e.GetType() == typ {
				return e
			}
		case <-timeout:
			c.t.Fatalf("no %v event within 5s", typ)
		}
	}
}

// nextUpdate returns the next UPDATE for taskID.
func (c *sched) nextUpdate(taskID string) mesos.TaskStatus {
	c.t.Helper()
	for {
		e := c.next(scheduler.Event_UPDATE)
		if e.Update.Status.TaskID.Value == taskID {
			return e.Update.Status
		}
	}
}

func (c *sched) call(call *scheduler.Call) error {
	call = call.With(calls.Framework(c.id))
	resp, err := c.caller.Call(context.Background(), call)
	if resp != nil {
		resp.Close()
	}
	return err
}

func (c *sched) mustCall(call *scheduler.Call) {
	c.t.Helper()
	if err := c.call(call); err != nil {
		c.t.Fatalf("%v: %v", call.GetType(), err)
	}
}

func scalar(name string, v float64) mesos.Resource {
	return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
}

func commandTask(id string, o mesos.Offer, cpus, mem float64) mesos.TaskInfo {
	v := "sleep 1"
	return mesos.TaskInfo{Name: id, TaskID: mesos.TaskID{Value: id}, AgentID: o.AgentID,
		Resources: mesos.Resources{scalar("cpus", cpus), scalar("mem", mem)},
		Command:   &mesos.CommandInfo{Value: &v}}
}
