package dispatcher

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/mesosconn/detector/zktest"
)

// TestElectorOneLeaderAtATime, against a real ZooKeeper: the first member
// leads, the second waits and names the first as leader; when the leader's
// session ends the second leads; when the second's member znode is deleted
// under it (as when its session expires) it hears that it lost.
func TestElectorOneLeaderAtATime(t *testing.T) {
	addr := zktest.Start(t)
	ctx := context.Background()
	a, err := NewElector([]string{addr}, "/flint/elect", 4*time.Second, "http://a:7077")
	if err != nil {
		t.Fatal(err)
	}
	lostA, err := a.Lead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewElector([]string{addr}, "/flint/elect", 4*time.Second, "http://b:7077")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	type led struct {
		lost <-chan struct{}
		err  error
	}
	bLeads := make(chan led, 1)
	go func() { l, err := b.Lead(ctx); bLeads <- led{l, err} }()
	// b's member exists once b names a leader other than none; it must wait.
	for {
		if l, err := b.Leader(); err != nil || l != "http://a:7077" {
			t.Fatalf("leader %q, %v; want http://a:7077", l, err)
		}
		kids, _, err := b.conn.Children("/flint/elect/leader")
		if err != nil {
			t.Fatal(err)
		}
		if len(kids) == 2 {
			break
		}
		select {
		case r := <-bLeads:
			t.Fatalf("b leads while a does: %+v", r)
		case <-time.After(10 * time.Millisecond): // polling ZooKeeper for b's member, not synchronising
		}
	}
	select {
	case r := <-bLeads:
		t.Fatalf("b leads while a does: %+v", r)
	default:
	}
	a.Close()
	<-lostA // a's own session ended: it no longer leads
	r := <-bLeads
	if r.err != nil {
		t.Fatal(r.err)
	}
	if l, err := b.Leader(); err != nil || l != "http://b:7077" {
		t.Fatalf("leader %q, %v; want http://b:7077", l, err)
	}
	// Another client deletes b's member: b has lost.
	c := zktest.Client(t, addr)
	if err := c.Delete(b.node, -1); err != nil {
		t.Fatal(err)
	}
	<-r.lost
	if _, err := b.Lead(ctx); !errors.Is(err, ErrLostLeadership) {
		t.Fatalf("Lead after the member was deleted: %v, want ErrLostLeadership", err)
	}
}

// TestClientMovesOnFromAStandbyAndAnUnreachableDispatcher: given three
// dispatchers — one gone, one standby, one leading — a request reaches the
// leader, the body sent again intact, and later requests go to it first.
func TestClientMovesOnFromAStandbyAndAnUnreachableDispatcher(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	sh, err := StandbyHandler(ServerConfig{Anonymous: true}, func() (string, error) { return "http://leader", nil })
	if err != nil {
		t.Fatal(err)
	}
	var standbyHits, leaderHits atomic.Int32
	counted := func(n *atomic.Int32, h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n.Add(1); h.ServeHTTP(w, r) })
	}
	standby := httptest.NewServer(counted(&standbyHits, sh))
	defer standby.Close()
	var mu sync.Mutex
	var bodies []string
	leader := httptest.NewServer(counted(&leaderHits, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		buf := make([]byte, 512)
		for {
			n, err := r.Body.Read(buf)
			b.Write(buf[:n])
			if err != nil {
				break
			}
		}
		mu.Lock()
		bodies = append(bodies, b.String())
		mu.Unlock()
		reply(w, http.StatusOK, CreateResponse{Success: true, SubmissionID: "driver-20260101000000-abcd"})
	})))
	defer leader.Close()
	c, err := ClientFor("mesos://"+strings.TrimPrefix(gone.URL, "http://")+","+strings.TrimPrefix(standby.URL, "http://")+","+strings.TrimPrefix(leader.URL, "http://"), "")
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.Create(context.Background(), CreateRequest{AppResource: "http://x/prog", AppArgs: []string{"a"}})
	if err != nil || id != "driver-20260101000000-abcd" {
		t.Fatalf("create: %q, %v", id, err)
	}
	mu.Lock()
	got := bodies
	mu.Unlock()
	if len(got) != 1 || !strings.Contains(got[0], `"appResource": "http://x/prog"`) || standbyHits.Load() != 1 {
		t.Fatalf("leader got %q; standby asked %d times", got, standbyHits.Load())
	}
	if _, err := c.Create(context.Background(), CreateRequest{AppResource: "http://x/prog"}); err != nil || standbyHits.Load() != 1 || leaderHits.Load() != 2 {
		t.Fatalf("second create: %v; standby asked %d, leader %d times (want the leader first)", err, standbyHits.Load(), leaderHits.Load())
	}
	// Alone, a standby's answer is the error, naming the leader.
	only, _ := ClientFor("mesos://"+strings.TrimPrefix(standby.URL, "http://"), "")
	var ae *APIError
	if _, err := only.List(context.Background()); !errors.As(err, &ae) || ae.Code != http.StatusServiceUnavailable || !strings.Contains(ae.Message, "the leader is http://leader") {
		t.Fatalf("standby alone: %v", err)
	}
}
