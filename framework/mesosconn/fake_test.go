package mesosconn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/mesosconn/detector"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// fakeMaster is an in-test Mesos scheduler API: SUBSCRIBE streams RecordIO events, every call
// is recorded, and tests script answers and events.
type fakeMaster struct {
	t     *testing.T
	srv   *httptest.Server
	clock *fakeClock
	id    string // master id

	mu              sync.Mutex
	calls           []recorded
	streams         []*fakeStream
	heartbeat       float64
	subscribeStatus []answer                         // answers for the next SUBSCRIBEs
	subscribeError  string                           // answer SUBSCRIBE with this ERROR event
	callStatus      map[scheduler.Call_Type][]int    // answers for the next calls of a type
	onCall          func(fm *fakeMaster, r recorded) // after answering a non-SUBSCRIBE call
	editJSON        func([]byte) []byte              // rewrites JSON events before they are sent
	nextFramework   int
}

// answer is a scripted HTTP answer.
type answer struct {
	status int
	body   string
}

type recorded struct {
	Call   scheduler.Call
	Header http.Header
	At     time.Time // on the fake clock
	Stream string    // Mesos-Stream-Id sent with the call
}

type fakeStream struct {
	id        string
	framework string
	events    chan *scheduler.Event
	closing   chan struct{}
	once      sync.Once
}

func (s *fakeStream) close() { s.once.Do(func() { close(s.closing) }) }

func newFakeMaster(t *testing.T, clock *fakeClock, id string) *fakeMaster {
	fm := &fakeMaster{t: t, clock: clock, id: id, heartbeat: 3600, callStatus: map[scheduler.Call_Type][]int{}}
	fm.srv = httptest.NewServer(http.HandlerFunc(fm.serve))
	t.Cleanup(fm.close)
	return fm
}

// restartAs makes the master answer as a new master id from now on, as a
// restarted Mesos master does, and ends the current stream.
func (fm *fakeMaster) restartAs(id string) {
	fm.mu.Lock()
	fm.id = id
	fm.mu.Unlock()
	fm.dropStream()
}

func (fm *fakeMaster) addr() string { return strings.TrimPrefix(fm.srv.URL, "http://") }

func (fm *fakeMaster) close() {
	fm.mu.Lock()
	for _, s := range fm.streams {
		s.close()
	}
	fm.mu.Unlock()
	fm.srv.CloseClientConnections()
	fm.srv.Close()
}

func (fm *fakeMaster) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/api/v1/scheduler" {
		http.Error(w, "bad request", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var call scheduler.Call
	ct := r.Header.Get("Content-Type")
	switch ct {
	case "application/x-protobuf":
		err = call.Unmarshal(body)
	case "application/json":
		err = json.Unmarshal(body, &call)
	default:
		http.Error(w, "unsupported media type", http.StatusUnsupportedMediaType)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rec := recorded{Call: call, Header: r.Header.Clone(), At: fm.clock.Now(), Stream: r.Header.Get("Mesos-Stream-Id")}
	fm.mu.Lock()
	fm.calls = append(fm.calls, rec)
	fm.mu.Unlock()
	if call.Type == scheduler.Call_SUBSCRIBE {
		fm.subscribe(w, r, ct, &call)
		return
	}
	fm.mu.Lock()
	status := http.StatusAccepted
	if q := fm.callStatus[call.Type]; len(q) > 0 {
		status, fm.callStatus[call.Type] = q[0], q[1:]
	} else if cur := fm.currentLocked(); cur == nil || cur.id != rec.Stream {
		status = http.StatusBadRequest
	}
	hook := fm.onCall
	fm.mu.Unlock()
	w.WriteHeader(status)
	if status == http.StatusAccepted && hook != nil {
		hook(fm, rec)
	}
}

func (fm *fakeMaster) subscribe(w http.ResponseWriter, r *http.Request, ct string, call *scheduler.Call) {
	fm.mu.Lock()
	if len(fm.subscribeStatus) > 0 {
		a := fm.subscribeStatus[0]
		fm.subscribeStatus = fm.subscribeStatus[1:]
		fm.mu.Unlock()
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
		return
	}
	fw := call.GetFrameworkID().GetValue()
	if fw == "" {
		fm.nextFramework++
		fw = fmt.Sprintf("%s-%04d", fm.id, fm.nextFramework-1)
	}
	for _, old := range fm.streams {
		old.close()
	}
	s := &fakeStream{id: fmt.Sprintf("stream-%d", len(fm.streams)+1), framework: fw, events: make(chan *scheduler.Event, 100), closing: make(chan struct{})}
	fm.streams = append(fm.streams, s)
	hb, failure, masterID := fm.heartbeat, fm.subscribeError, fm.id
	fm.mu.Unlock()

	w.Header().Set("Content-Type", ct)
	w.Header().Set("Mesos-Stream-Id", s.id)
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	port := uint32(5050)
	first := &scheduler.Event{Type: scheduler.Event_SUBSCRIBED, Subscribed: &scheduler.Event_Subscribed{
		FrameworkID:              &mesos.FrameworkID{Value: fw},
		HeartbeatIntervalSeconds: &hb,
		MasterInfo:               &mesos.MasterInfo{ID: masterID, IP: 16777343, Port: &port},
	}}
	if failure != "" {
		first = &scheduler.Event{Type: scheduler.Event_ERROR, Error: &scheduler.Event_Error{Message: failure}}
	}
	fm.mu.Lock()
	edit := fm.editJSON
	fm.mu.Unlock()
	if !writeEventEdited(w, ct, first, edit) || failure != "" {
		return
	}
	for {
		select {
		case e := <-s.events:
			if !writeEventEdited(w, ct, e, edit) {
				return
			}
		case <-s.closing:
			return
		case <-r.Context().Done():
			return
		}
	}
}

func writeEvent(w http.ResponseWriter, ct string, e *scheduler.Event) bool {
	return writeEventEdited(w, ct, e, nil)
}

// writeEventEdited writes e, its JSON passed through edit when set.
func writeEventEdited(w http.ResponseWriter, ct string, e *scheduler.Event, edit func([]byte) []byte) bool {
	var b []byte
	var err error
	if ct == "application/json" {
		b, err = json.Marshal(e)
		if err == nil && edit != nil {
			b = edit(b)
		}
	} else {
		b, err = e.Marshal()
	}
	if err != nil {
		panic(err)
	}
	if _, err := fmt.Fprintf(w, "%d\n%s", len(b), b); err != nil {
		return false
	}
	w.(http.Flusher).Flush()
	return true
}

func (fm *fakeMaster) currentLocked() *fakeStream {
	if len(fm.streams) == 0 {
		return nil
	}
	return fm.streams[len(fm.streams)-1]
}

// send queues an event on the current stream.
func (fm *fakeMaster) send(e *scheduler.Event) {
	fm.mu.Lock()
	s := fm.currentLocked()
	fm.mu.Unlock()
	if s == nil {
		fm.t.Fatal("fake master: no stream to send on")
	}
	s.events <- e
}

// dropStream ends the current stream as a crashed connection would.
func (fm *fakeMaster) dropStream() {
	fm.mu.Lock()
	s := fm.currentLocked()
	fm.mu.Unlock()
	s.close()
}

func (fm *fakeMaster) setSubscribeStatus(codes ...int) {
	fm.mu.Lock()
	for _, c := range codes {
		fm.subscribeStatus = append(fm.subscribeStatus, answer{status: c})
	}
	fm.mu.Unlock()
}

// setSubscribeAnswer answers the next n SUBSCRIBEs with status and body.
func (fm *fakeMaster) setSubscribeAnswer(n, status int, body string) {
	fm.mu.Lock()
	for range n {
		fm.subscribeStatus = append(fm.subscribeStatus, answer{status, body})
	}
	fm.mu.Unlock()
}

func (fm *fakeMaster) setCallStatus(t scheduler.Call_Type, codes ...int) {
	fm.mu.Lock()
	fm.callStatus[t] = append(fm.callStatus[t], codes...)
	fm.mu.Unlock()
}

func (fm *fakeMaster) callsOf(t scheduler.Call_Type) []recorded {
	fm.mu.Lock()
	defer fm.mu.Unlock()
	var out []recorded
	for _, c := range fm.calls {
		if c.Call.Type == t {
			out = append(out, c)
		}
	}
	return out
}

// allCalls returns every call's type in order, SUBSCRIBE included.
func (fm *fakeMaster) allCalls() []scheduler.Call_Type {
	fm.mu.Lock()
	defer fm.mu.Unlock()
	out := make([]scheduler.Call_Type, len(fm.calls))
	for i, c := range fm.calls {
		out[i] = c.Call.Type
	}
	return out
}

// waitCalls waits until there are at least n calls of type t and returns them.
func (fm *fakeMaster) waitCalls(t scheduler.Call_Type, n int) []recorded {
	fm.t.Helper()
	var got []recorded
	eventually(fm.t, fmt.Sprintf("%d %s call(s)", n, t), func() bool {
		got = fm.callsOf(t)
		return len(got) >= n
	})
	return got
}

// eventually polls cond for up to 10 s of real time.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitfor.True(t, 10*time.Second, what, cond)
}

// controlBarrier waits until the Conn's control loop has run two more
// steps, each started by a demand change whose call (REVIVE or SUPPRESS)
// it sends first: once the second change's call arrives, every call of
// the step before it has been sent (one goroutine sends them in order),
// also one due after a clock advance made before the barrier.
func controlBarrier(t *testing.T, c *Conn, fm *fakeMaster) {
	t.Helper()
	for range 2 {
		on := !c.Demand()
		typ := scheduler.Call_SUPPRESS
		if on {
			typ = scheduler.Call_REVIVE
		}
		n := len(fm.callsOf(typ))
		c.SetDemand(on)
		fm.waitCalls(typ, n+1)
	}
}

// fakeClock is the shared manual clock (clock.Fake's doc says why
// testing/synctest cannot serve these tests: the Conn talks HTTP to a fake
// master on loopback TCP).
type fakeClock = clock.Fake

func newFakeClock() *fakeClock { return clock.NewFake(time.Time{}) }

// advanceWhenWaiting waits until some goroutine waits exactly d, then advances by d.
func advanceWhenWaiting(t *testing.T, f *fakeClock, d time.Duration) {
	t.Helper()
	eventually(t, fmt.Sprintf("a timer of %s", d), func() bool { return f.HasPending(d) })
	f.Advance(d)
}

// zeroSource makes rand return 0: backoff without jitter.
type zeroSource struct{}

func (zeroSource) Uint64() uint64 { return 0 }

// recorder is a Handler that records every event.
type recorder struct {
	mu     sync.Mutex
	events []string
	subs   []subscribedEvent
	offers []mesos.Offer
	status []mesos.TaskStatus
	errs   []error
	// onOffers and onUpdate run inside the handler (they may call the Conn).
	onOffers func([]mesos.Offer)
	onUpdate func(mesos.TaskStatus)
}

type subscribedEvent struct {
	id     string
	master mesos.MasterInfo
	re     bool
}

var _ Handler = (*recorder)(nil)

func (r *recorder) add(s string) {
	r.mu.Lock()
	r.events = append(r.events, s)
	r.mu.Unlock()
}

func (r *recorder) Subscribed(id string, m mesos.MasterInfo, re bool) {
	r.mu.Lock()
	r.subs = append(r.subs, subscribedEvent{id, m, re})
	r.mu.Unlock()
	r.add(fmt.Sprintf("subscribed %s re=%v", id, re))
}

func (r *recorder) Offers(o []mesos.Offer) {
	r.mu.Lock()
	r.offers = append(r.offers, o...)
	f := r.onOffers
	r.mu.Unlock()
	r.add(fmt.Sprintf("offers %d", len(o)))
	if f != nil {
		f(o)
	}
}

func (r *recorder) Rescinded(id mesos.OfferID) { r.add("rescinded " + id.Value) }

func (r *recorder) Update(s mesos.TaskStatus) {
	r.mu.Lock()
	r.status = append(r.status, s)
	f := r.onUpdate
	r.mu.Unlock()
	r.add(fmt.Sprintf("update %s %s", s.TaskID.Value, s.GetState()))
	if f != nil {
		f(s)
	}
}

func (r *recorder) AgentLost(a mesos.AgentID) { r.add("agent lost " + a.Value) }

func (r *recorder) ExecutorLost(a mesos.AgentID, e mesos.ExecutorID, status int) {
	r.add(fmt.Sprintf("executor lost %s/%s %d", a.Value, e.Value, status))
}

func (r *recorder) Message(a mesos.AgentID, e mesos.ExecutorID, data []byte) {
	r.add(fmt.Sprintf("message %s/%s %s", a.Value, e.Value, data))
}

func (r *recorder) Disconnected(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
	r.add("disconnected")
}

func (r *recorder) Aborted(err error) {
	r.mu.Lock()
	r.errs = append(r.errs, err)
	r.mu.Unlock()
	r.add("aborted")
}

func (r *recorder) has(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if e == s {
			return true
		}
	}
	return false
}

func (r *recorder) count(prefix string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if strings.HasPrefix(e, prefix) {
			n++
		}
	}
	return n
}

func (r *recorder) wait(t *testing.T, s string) {
	t.Helper()
	eventually(t, "handler event "+strconvQuote(s), func() bool { return r.has(s) })
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }

func quietLogger() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// testConfig is a Config for the fake master with a fake clock and no jitter.
func testConfig(fm *fakeMaster, clock *fakeClock) Config {
	return Config{
		Master:             "mesos://" + fm.addr(),
		Name:               "test",
		User:               "tester",
		Clock:              clock,
		Rand:               rand.New(zeroSource{}),
		Logger:             quietLogger(),
		StartTimeout:       time.Hour,
		MinBackoff:         time.Second,
		MaxBackoff:         5 * time.Second,
		CallTimeout:        5 * time.Second,
		DisableAutoRevive:  true,
		DisablePeriodicRec: true,
	}
}

// start starts a Conn and stops it at the end of the test.
func start(t *testing.T, cfg Config, h Handler) *Conn {
	t.Helper()
	c, err := Start(context.Background(), cfg, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = c.Stop(ctx, false)
	})
	return c
}

// leaderDetector is a Detector whose leader the test sets.
type leaderDetector struct {
	mu  sync.Mutex
	out chan detector.Leader
}

func newLeaderDetector() *leaderDetector { return &leaderDetector{out: make(chan detector.Leader, 1)} }

func (d *leaderDetector) Watch(ctx context.Context) <-chan detector.Leader {
	out := make(chan detector.Leader)
	go func() {
		defer close(out)
		for {
			select {
			case l := <-d.out:
				select {
				case out <- l:
				case <-ctx.Done():
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

func (d *leaderDetector) set(id, addr string) { d.out <- detector.Leader{ID: id, Addr: addr} }

type constSource uint64

func (s constSource) Uint64() uint64 { return uint64(s) }

func randFrom(v uint64) *rand.Rand { return rand.New(constSource(v)) }
