package mesosbackend

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/config/shuffleconf"
	"github.com/flint-mesos/flint/framework/tlspin"
)

// ShuffleServices keeps the application registered with the agents'
// shuffle services its map outputs live on (flint.shuffle.service.enabled),
// for both Mesos backends: a heartbeat to each as soon as the driver names
// it (backend.Batch.ShuffleServices) and then every interval, on the driver
// loop's ticks, so the service's sweep (its --app-timeout) never removes
// the files of a running application whose executors are gone; a DELETE
// of each shuffle the driver releases (backend.Batch.ShuffleReleases: the
// files of executors that no longer run have no one else to delete them);
// and a goodbye (DELETE of the application) when the backend stops, so the
// service drops its files at once instead of after the timeout. Spark's
// MesosExternalShuffleClient does the same (registerDriverWithShuffleService,
// its heartbeats, and the service's cleanup when the driver goes).
//
// A service whose heartbeats fail UnreachableAfter times in a row is
// reported unreachable once, at Error, and sent no more releases nor its
// goodbye: its outputs are lost to reducers on other agents, whose fetch
// failures make the driver recompute them. It is still probed, silently,
// with a heartbeat on each round's tick: a service restarted at the same
// address (a fixed --port without TLS; with TLS its new certificate makes
// it a new service, which the executors that re-registered with it name
// in their map statuses) answers once an executor of the application
// registered with it again, and is then reported reachable, at Info, and
// heartbeated, released to and told goodbye as before — else its sweep
// would remove the new outputs of a running application.
//
// The backend's owner goroutine calls Add, Tick and Release; the requests
// run on goroutines of their own (a slow service never holds the owner);
// the backend's Stop calls Goodbye once the owner has ended.
type ShuffleServices struct {
	app, token string
	every      time.Duration
	who        string // the backend ("coarse", "fine"): the log's prefix
	log        logrus.FieldLogger
	clients    map[string]*http.Client // by pin (owner, then Goodbye)
	last       time.Time               // the last heartbeat round
	wg         sync.WaitGroup
	probeCtx   context.Context // the probes of unreachable services; cancelled by Goodbye
	stopProbes context.CancelFunc

	mu    sync.Mutex
	known []*serviceState
	// unanswered counts the last round's heartbeats that have neither
	// answered nor failed: the round is in flight while it is not 0. heard
	// counts it down on each request's own goroutine, so the round is over
	// the moment its last outcome is recorded; a round marked over later,
	// by a goroutine of its own, made a due tick in between send nothing.
	unanswered int
}

// serviceState is one service and its heartbeats' recent failures.
type serviceState struct {
	svc         backend.ShuffleService
	failures    int // heartbeats failed in a row
	unreachable bool
	probing     bool // an unreachable service's probe is in flight
}

// UnreachableAfter is how many heartbeats in a row must fail before a
// shuffle service is reported unreachable and no longer heartbeated.
const UnreachableAfter = 3

// serviceTimeout bounds one request to a service.
const serviceTimeout = 10 * time.Second

// NewShuffleServices is the client of backend who's (the log's prefix)
// application with secret, heartbeating every interval.
func NewShuffleServices(secret string, every time.Duration, who string, log logrus.FieldLogger) *ShuffleServices {
	app := shuffleconf.AppID(secret)
	ctx, cancel := context.WithCancel(context.Background())
	return &ShuffleServices{app: app, token: shuffleconf.Token(secret, app), every: every, who: who, log: log,
		clients: map[string]*http.Client{}, probeCtx: ctx, stopProbes: cancel}
}

// Add registers newly named services with a first heartbeat.
func (s *ShuffleServices) Add(svcs []backend.ShuffleService) {
	added := make([]*serviceState, len(svcs))
	for i, svc := range svcs {
		added[i] = &serviceState{svc: svc}
	}
	s.mu.Lock()
	s.known = append(s.known, added...)
	s.mu.Unlock()
	s.heartbeat(added, false)
}

// Tick sends a heartbeat round when one is due and none is in flight (a
// heartbeat of the last round has neither answered nor failed: a slow
// service never piles rounds up); a tick that finds one in flight sends
// nothing and the next tick after the round ended does.
func (s *ShuffleServices) Tick(now time.Time) {
	if now.Sub(s.last) < s.every || s.inFlight() {
		return
	}
	s.last = now
	s.probe()
	live := s.reachable()
	s.mu.Lock()
	s.unanswered = len(live)
	s.mu.Unlock()
	s.heartbeat(live, true)
}

// inFlight is whether a heartbeat of the last round has neither answered
// nor failed.
func (s *ShuffleServices) inFlight() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unanswered > 0
}

// probe sends a heartbeat to each unreachable service without one in
// flight; it is not part of the round (a service that does not answer
// never delays the others' heartbeats) and logs nothing when it fails.
func (s *ShuffleServices) probe() {
	s.mu.Lock()
	var down []*serviceState
	for _, st := range s.known {
		if st.unreachable && !st.probing {
			st.probing = true
			down = append(down, st)
		}
	}
	s.mu.Unlock()
	for _, st := range down {
		s.sendThen(s.probeCtx, st.svc, http.MethodPost, "/heartbeat", nil, func(err error) { s.probed(st, err) })
	}
}

// probed records a probe's outcome: an unreachable service that answers
// is reachable again.
func (s *ShuffleServices) probed(st *serviceState, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st.probing = false
	if err != nil || !st.unreachable {
		return
	}
	st.unreachable, st.failures = false, 0
	s.log.Infof("%s: shuffle service %s answers again (restarted, and an executor registered the application with it): heartbeating it again",
		s.who, st.svc.BaseURL)
}

// Release deletes the released shuffles' files on every reachable
// service (executors still running delete theirs too; a file deleted
// twice is no error).
func (s *ShuffleServices) Release(rs []backend.ShuffleRelease) {
	live := s.reachable()
	for _, r := range rs {
		suffix := ReleasePath(r)
		for _, st := range live {
			s.send(context.Background(), st.svc, http.MethodDelete, suffix, nil)
		}
	}
}

// ReleasePath is the service's request path, after the application's, that
// deletes what r releases: /shuffles/<id> for the executors' own ids,
// /shuffles/<id>?ns=<namespace> for one of a namespace, /namespaces/<ns>
// for a whole namespace (package shuffleservice's protocol).
func ReleasePath(r backend.ShuffleRelease) string {
	switch {
	case r.Namespace == "":
		return "/shuffles/" + strconv.Itoa(r.ShuffleID)
	case r.All:
		return "/namespaces/" + url.PathEscape(r.Namespace)
	}
	return "/shuffles/" + strconv.Itoa(r.ShuffleID) + "?ns=" + url.QueryEscape(r.Namespace)
}

// Goodbye tells every reachable service the application ended (DELETE:
// its files go), after the requests in flight.
func (s *ShuffleServices) Goodbye(ctx context.Context) {
	s.stopProbes()
	s.wg.Wait()
	live := s.reachable()
	var round sync.WaitGroup
	for _, st := range live {
		s.send(ctx, st.svc, http.MethodDelete, "", &round)
	}
	round.Wait()
	for _, c := range s.clients {
		c.CloseIdleConnections()
	}
	if len(live) > 0 {
		s.log.Debugf("%s: told %d shuffle service(s) application %s ended", s.who, len(live), s.app)
	}
}

// reachable are the services not reported unreachable.
func (s *ShuffleServices) reachable() []*serviceState {
	s.mu.Lock()
	defer s.mu.Unlock()
	var live []*serviceState
	for _, st := range s.known {
		if !st.unreachable {
			live = append(live, st)
		}
	}
	return live
}

// heartbeat sends one heartbeat to each service, of Tick's round or not
// (Add's first ones).
func (s *ShuffleServices) heartbeat(sts []*serviceState, round bool) {
	for _, st := range sts {
		s.sendThen(context.Background(), st.svc, http.MethodPost, "/heartbeat", nil, func(err error) { s.heard(st, round, err) })
	}
}

// heard records a heartbeat's outcome, and counts one of the round's
// down; the UnreachableAfter-th failure in a row reports the service
// unreachable.
func (s *ShuffleServices) heard(st *serviceState, round bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if round {
		s.unanswered--
	}
	if err == nil {
		st.failures = 0
		return
	}
	st.failures++
	if st.failures < UnreachableAfter {
		s.log.Warnf("%s: shuffle service %s: heartbeat failed (%d of %d before it counts as unreachable): %v",
			s.who, st.svc.BaseURL, st.failures, UnreachableAfter, err)
		return
	}
	if !st.unreachable {
		st.unreachable = true
		s.log.Errorf("%s: shuffle service %s is unreachable: %d heartbeats in a row failed (last: %v); no longer heartbeating it — "+
			"the map outputs it served are lost to reducers on other agents, whose fetch failures make the driver recompute them",
			s.who, st.svc.BaseURL, st.failures, err)
	}
}

func (s *ShuffleServices) send(ctx context.Context, svc backend.ShuffleService, method, suffix string, round *sync.WaitGroup) {
	s.sendThen(ctx, svc, method, suffix, round, func(err error) {
		if err != nil {
			s.log.Warnf("%s: shuffle service %s: %v", s.who, svc.BaseURL, err)
		}
	})
}

// sendThen sends one request on a goroutine of its own and hands its
// outcome to then; round (if any) is done after then.
func (s *ShuffleServices) sendThen(ctx context.Context, svc backend.ShuffleService, method, suffix string, round *sync.WaitGroup, then func(error)) {
	c, err := s.client(svc.Pin)
	if err != nil {
		then(err)
		return
	}
	if round != nil {
		round.Add(1)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if round != nil {
			defer round.Done()
		}
		then(s.request(ctx, c, method, svc.BaseURL+shuffleconf.ServiceAPIPrefix+s.app+suffix))
	}()
}

func (s *ShuffleServices) request(ctx context.Context, c *http.Client, method, url string) error {
	ctx, cancel := context.WithTimeout(ctx, serviceTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s", method, url, resp.Status)
	}
	return nil
}

// client is the HTTP client for a service with the certificate pin ("":
// plaintext), made once per pin.
func (s *ShuffleServices) client(pin string) (*http.Client, error) {
	if c := s.clients[pin]; c != nil {
		return c, nil
	}
	tr := &http.Transport{}
	if pin != "" {
		cfg, err := tlspin.Client(pin)
		if err != nil {
			return nil, err
		}
		tr.TLSClientConfig = cfg
	}
	c := &http.Client{Transport: tr}
	s.clients[pin] = c
	return c, nil
}
