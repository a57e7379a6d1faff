package detector

import (
	"context"
	"net"
	"strconv"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Leader is the leading master. The zero Leader means no master leads.
type Leader struct {
	ID   string // MasterInfo.id; empty for a static address
	Addr string // host:port of the master's HTTP API
	// Info is the leader's MasterInfo as the detector learnt it (only ID, hostname, IP, port,
	// address, PID and version are filled).
	Info mesos.MasterInfo
}

// IsZero reports whether no master leads.
func (l Leader) IsZero() bool { return l.Addr == "" }

// Same reports whether l and o name the same master.
func (l Leader) Same(o Leader) bool { return l.ID == o.ID && l.Addr == o.Addr }

// Detector reports the leading master.
type Detector interface {
	// Watch reports the leader on the returned channel: the current one as soon as it is known,
	// then every change (a zero Leader while none leads). The channel holds only the newest
	// value, so a slow reader skips stale leaders. It is closed once ctx is done and the watch
	// has released everything it held.
	Watch(ctx context.Context) <-chan Leader
}

// Func adapts a function to a Detector.
type Func func(ctx context.Context) <-chan Leader

// Watch calls f.
func (f Func) Watch(ctx context.Context) <-chan Leader { return f(ctx) }

// Static is a Detector for a single master at a fixed host:port.
type Static string

var _ Detector = Static("")

// Watch reports the address once, then waits for ctx.
func (s Static) Watch(ctx context.Context) <-chan Leader {
	out := make(chan Leader, 1)
	host, port, _ := net.SplitHostPort(string(s))
	p, _ := strconv.Atoi(port)
	out <- Leader{Addr: string(s), Info: mesos.MasterInfo{Hostname: &host, Port: u32p(uint32(p))}}
	go func() {
		<-ctx.Done()
		close(out)
	}()
	return out
}

// publish replaces whatever out holds with l. out must have capacity 1 and a single writer.
func publish(out chan Leader, l Leader) {
	select {
	case <-out:
	default:
	}
	out <- l
}

func u32p(v uint32) *uint32 { return &v }
