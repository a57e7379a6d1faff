package mesosbackend

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/config/shuffleconf"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/shuffle/shuffleservice"
)

// startService starts an agent's shuffle service on its own clock with
// application secret's registration and an executor store holding
// shuffles 3 and 4.
func startService(t *testing.T, secret string) (*shuffleservice.Service, *clock.Fake, string) {
	t.Helper()
	dir := t.TempDir()
	log, _ := logtest.NewNullLogger()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc, err := shuffleservice.Start(shuffleservice.Config{Dir: dir, TLS: true, SweepEvery: -1, Clock: clk, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	app := shuffleconf.AppID(secret)
	if err := shuffleservice.Register(dir, app, shuffleconf.Token(secret, app)); err != nil {
		t.Fatal(err)
	}
	for _, sh := range []string{"shuffle_3", "shuffle_4"} {
		if err := os.MkdirAll(filepath.Join(shuffleservice.StoreRoot(dir, app, "exec-1"), sh), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return svc, clk, dir
}

func asShuffleService(svc *shuffleservice.Service) backend.ShuffleService {
	a := svc.Address()
	return backend.ShuffleService{BaseURL: a.BaseURL(), Pin: a.Pin}
}

// The client keeps the application registered with a live service
// (heartbeats on Add and on Tick), deletes a released shuffle's files
// there and nothing else, and says goodbye at the end (the application's
// files go). A service that stopped answering is reported unreachable,
// once, after UnreachableAfter heartbeats in a row failed, and is then
// sent no release nor goodbye; its silent probes log nothing.
func TestShuffleServicesHeartbeatReleaseGoodbyeAndUnreachable(t *testing.T) {
	const secret = "the application's secret"
	app := shuffleconf.AppID(secret)
	live, liveClk, liveDir := startService(t, secret)
	dead, _, deadDir := startService(t, secret)
	dead.Close()
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	s := NewShuffleServices(secret, time.Second, "test", log)
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

	// tick ticks at t0+at and waits for its requests' outcomes; the live
	// service's clock moves first, so its last heartbeat says whether
	// the tick sent a round.
	tick := func(at time.Duration, round bool) {
		t.Helper()
		before, _ := live.LastHeard(app)
		liveClk.Advance(time.Minute)
		s.Tick(t0.Add(at))
		s.wg.Wait()
		if s.inFlight() {
			t.Fatalf("the tick at t0+%v: every request ended, yet a round is in flight", at)
		}
		want := before
		if round {
			want = liveClk.Now()
		}
		if heard, _ := live.LastHeard(app); !heard.Equal(want) {
			t.Fatalf("the tick at t0+%v (a round: %v): the live service last heard of the application at %v; want %v", at, round, heard, want)
		}
	}

	s.Add([]backend.ShuffleService{asShuffleService(live), asShuffleService(dead)})
	s.wg.Wait()
	if heard, ok := live.LastHeard(app); !ok || !heard.Equal(liveClk.Now()) {
		t.Fatalf("the live service last heard of the application at %v, %v; want its first heartbeat now", heard, ok)
	}
	tick(0, true)              // the dead service's heartbeat 2 fails (1: Add's)
	tick(time.Second/2, false) // not due: no round

	s.Release([]backend.ShuffleRelease{{ShuffleID: 3}})
	s.wg.Wait()
	store := shuffleservice.StoreRoot(liveDir, app, "exec-1")
	if _, err := os.Stat(filepath.Join(store, "shuffle_3")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("released shuffle 3 on the service: %v; want it deleted", err)
	}
	if _, err := os.Stat(filepath.Join(store, "shuffle_4")); err != nil {
		t.Errorf("shuffle 4 (not released) on the service: %v", err)
	}

	tick(time.Second, true) // its heartbeat 3 fails: it is unreachable
	unreachable := func() (warned, errored int) {
		for _, e := range hook.AllEntries() {
			if !strings.Contains(e.Message, dead.Address().BaseURL()) {
				continue
			}
			switch e.Level {
			case logrus.WarnLevel:
				if strings.Contains(e.Message, "heartbeat failed") { // the release of shuffle 3 failed there too
					warned++
				}
			case logrus.ErrorLevel:
				errored++
				if !strings.Contains(e.Message, "is unreachable: 3 heartbeats in a row failed") || !strings.Contains(e.Message, "recompute") {
					t.Errorf("the unreachable service's report: %q", e.Message)
				}
			}
		}
		return warned, errored
	}
	if w, e := unreachable(); w != UnreachableAfter-1 || e != 1 {
		t.Fatalf("after %d failed heartbeats: %d failed heartbeats warned of and %d errors naming the dead service; want %d and 1",
			UnreachableAfter, w, e, UnreachableAfter-1)
	}
	before := len(hook.AllEntries())
	tick(2*time.Second, true) // a round for the live service, a silent probe of the dead one
	s.Release([]backend.ShuffleRelease{{ShuffleID: 4}})
	s.Goodbye(context.Background())
	for _, e := range hook.AllEntries()[before:] {
		if strings.Contains(e.Message, dead.Address().BaseURL()) {
			t.Errorf("the unreachable service was sent a request: %s", e.Message)
		}
	}
	if _, err := os.Stat(shuffleservice.AppDir(liveDir, app)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the application's files on the live service after the goodbye: %v", err)
	}
	if _, err := os.Stat(shuffleservice.AppDir(deadDir, app)); err != nil {
		t.Errorf("the application's files on the dead service's disk: %v (nothing was sent there)", err)
	}
}

// A due tick that finds the last round in flight (a service yet to answer)
// sends nothing, and does not count as a round: the first due tick after
// the round's last answer sends the next one. The round is over when its
// last outcome is recorded, not some time later (issue 27: a due tick in
// between sent nothing).
func TestShuffleServicesTickWhileARoundIsInFlight(t *testing.T) {
	var got atomic.Int32
	arrived, answer := make(chan struct{}), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(answer) }) }
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got.Add(1) == 2 { // the first round's heartbeat answers when the test says
			close(arrived)
			<-answer
		}
	}))
	defer srv.Close()
	defer free()
	log, _ := logtest.NewNullLogger()
	s := NewShuffleServices("the application's secret", time.Second, "test", log)
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	sent := func(want int32, when string) {
		t.Helper()
		if n := got.Load(); n != want {
			t.Fatalf("%s: the service got %d requests; want %d", when, n, want)
		}
	}

	s.Add([]backend.ShuffleService{{BaseURL: srv.URL}})
	s.wg.Wait()
	s.Tick(t0)
	<-arrived
	s.Tick(t0.Add(time.Second)) // due, but the round is in flight
	if !s.inFlight() {
		t.Fatal("the round is not in flight while its heartbeat is unanswered")
	}
	free()
	s.wg.Wait()
	sent(2, "after a due tick while the round was in flight")
	s.Tick(t0.Add(3 * time.Second / 2)) // due: the last round was at t0
	s.wg.Wait()
	sent(3, "after the first due tick once the round ended")
	s.Tick(t0.Add(2 * time.Second)) // not due
	s.wg.Wait()
	sent(3, "after a tick half an interval later")
	s.Goodbye(context.Background())
}

// A release names the executors' own shuffle, a namespace's, or a whole
// namespace in the service's protocol (package shuffleservice).
func TestReleasePath(t *testing.T) {
	for _, c := range []struct {
		r    backend.ShuffleRelease
		want string
	}{
		{backend.ShuffleRelease{ShuffleID: 7}, "/shuffles/7"},
		{backend.ShuffleRelease{ShuffleID: 7, Namespace: "run-1"}, "/shuffles/7?ns=run-1"},
		{backend.ShuffleRelease{ShuffleID: 7, Namespace: "run-1", All: true}, "/namespaces/run-1"},
	} {
		if got := ReleasePath(c.r); got != c.want {
			t.Errorf("ReleasePath(%+v) = %q, want %q", c.r, got, c.want)
		}
	}
}

// A service reported unreachable is still probed, silently, on each
// round's tick; when a new service at the same address (a fixed port,
// without TLS) answers — once an executor registered the application with
// it again — it is reported reachable once, at Info, and heartbeated,
// released to and told goodbye as before. While it is down, or up but
// without the application, the probes fail without a word.
func TestShuffleServicesProbeAnUnreachableServiceUntilItAnswersAgain(t *testing.T) {
	const secret = "the application's secret"
	app := shuffleconf.AppID(secret)
	dir := t.TempDir()
	logNull, _ := logtest.NewNullLogger()
	first, err := shuffleservice.Start(shuffleservice.Config{Dir: dir, SweepEvery: -1, Log: logNull})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if err := shuffleservice.Register(dir, app, shuffleconf.Token(secret, app)); err != nil {
		t.Fatal(err)
	}
	svc := asShuffleService(first)
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	s := NewShuffleServices(secret, time.Second, "test", log)
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	tick := func(n int) { // the round and the probes ended
		t.Helper()
		s.Tick(t0.Add(time.Duration(n) * time.Second))
		s.wg.Wait()
		if s.inFlight() {
			t.Fatalf("the tick at t0+%ds: every request ended, yet a round is in flight", n)
		}
	}
	naming := func(level logrus.Level, text string) int {
		n := 0
		for _, e := range hook.AllEntries() {
			if e.Level == level && strings.Contains(e.Message, svc.BaseURL) && strings.Contains(e.Message, text) {
				n++
			}
		}
		return n
	}
	s.Add([]backend.ShuffleService{svc})
	s.wg.Wait()

	// it dies with its files: three heartbeats fail, it is unreachable
	first.Close()
	if err := os.RemoveAll(shuffleservice.AppsDir(dir)); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= UnreachableAfter; i++ {
		tick(i)
	}
	if naming(logrus.ErrorLevel, "is unreachable") != 1 {
		t.Fatalf("the dead service is not reported unreachable once: %v", hook.AllEntries())
	}
	before := len(hook.AllEntries())
	tick(4) // probed while down: silent

	_, port, _ := strings.Cut(strings.TrimPrefix(svc.BaseURL, "http://"), ":")
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	second, err := shuffleservice.Start(shuffleservice.Config{Dir: dir, Port: p, SweepEvery: -1, Clock: clk, Log: logNull})
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if got := asShuffleService(second); got != svc {
		t.Fatalf("the new service is %v; want the same address as the dead one %v", got, svc)
	}
	tick(5) // up, but the application is not registered there: still unreachable, silent
	if _, heard := second.LastHeard(app); heard {
		t.Fatal("the new service heard from the application before it was registered there")
	}
	if after := hook.AllEntries()[before:]; len(after) != 0 {
		t.Fatalf("failed probes were logged: %v", after)
	}

	if err := shuffleservice.Register(dir, app, shuffleconf.Token(secret, app)); err != nil { // an executor re-registers
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(shuffleservice.StoreRoot(dir, app, "exec-1"), "shuffle_5"), 0o700); err != nil {
		t.Fatal(err)
	}
	tick(6)
	if n := naming(logrus.InfoLevel, "answers again"); n != 1 {
		t.Fatalf("the restarted service reported reachable %d times; want once", n)
	}
	if heard, ok := second.LastHeard(app); !ok || !heard.Equal(clk.Now()) {
		t.Fatalf("the restarted service last heard of the application at %v, %v; want the probe's heartbeat", heard, ok)
	}
	clk.Advance(time.Minute)
	tick(7) // a heartbeat round, as for any reachable service
	if heard, _ := second.LastHeard(app); !heard.Equal(clk.Now()) {
		t.Fatalf("the restarted service last heard of the application at %v; want the round's heartbeat at %v", heard, clk.Now())
	}
	s.Release([]backend.ShuffleRelease{{ShuffleID: 5}})
	s.wg.Wait()
	if _, err := os.Stat(filepath.Join(shuffleservice.StoreRoot(dir, app, "exec-1"), "shuffle_5")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("released shuffle 5 on the restarted service: %v; want it deleted", err)
	}
	s.Goodbye(context.Background())
	if _, err := os.Stat(shuffleservice.AppDir(dir, app)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the application's files on the restarted service after the goodbye: %v", err)
	}
	if n := naming(logrus.ErrorLevel, "is unreachable"); n != 1 {
		t.Errorf("%d unreachable reports; want the one before the restart", n)
	}
}
