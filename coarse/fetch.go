package coarse

import (
	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/mesosbackend"
)

// fetchEvents ends an executor's fetch credential as soon as the executor
// registers (it has its binary; the credential sits in its sandbox's
// stderr, where Mesos' fetcher logged the URI) or its Mesos task ends,
// before the backend's own handling.
type fetchEvents struct{ gatewayEvents }

func (f fetchEvents) ExecutorRegistered(info gateway.ExecutorInfo) {
	f.b.exe.Registered(info.ID)
	f.gatewayEvents.ExecutorRegistered(info)
}

// ExecutorLost also notes, while the driver stops, that an executor asked
// to stop has ended its stream: it is done, whether or not Mesos has said
// so yet. A master that restarted without ZooKeeper hears of the
// executors' exits only when their agents re-register, after their ping
// timeout (75 s with Mesos' defaults): Stop waits for the streams, not
// for that (see waitExecutors).
func (f fetchEvents) ExecutorLost(executorID, reason string) {
	b := f.b
	if e := b.execs[executorID]; e != nil && e.stopRequested && !e.streamEnded {
		e.streamEnded = true
		close(b.exited)
		b.exited = make(chan struct{})
	}
	f.gatewayEvents.ExecutorLost(executorID, reason)
}

// fetchHandler is the Mesos handler with the same revocation on a task's
// end, and executor exits that Flint uses deliberately (a binary failing
// its SHA-256 check) explained in the status message.
type fetchHandler struct{ handler }

var (
	_ gateway.Events    = fetchEvents{}
	_ mesosconn.Handler = fetchHandler{}
)

func (h fetchHandler) Update(st mesos.TaskStatus) {
	if mesosconn.Terminal(st.GetState()) {
		h.b.exe.Registered(st.TaskID.Value)
		if st.Message != nil {
			m := mesosbackend.ExplainStatus(*st.Message)
			st.Message = &m
		}
	}
	h.handler.Update(st)
}
