package coarse

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/config/shuffleconf"
	"github.com/flint-mesos/flint/framework/tlspin"
)

// services keeps the application registered with the agents' shuffle
// services its map outputs live on (flint.shuffle.service.enabled): a
// heartbeat to each as soon as the driver names it and then every
// interval, on the driver loop's ticks, so the service's sweep (its
// --app-timeout) never removes the files of a running application whose
// executors were released; and a goodbye (DELETE) when the backend stops,
// so the service drops them at once instead of after the timeout. Spark's
// MesosExternalShuffleClient does the same (registerDriverWithShuffleService,
// its heartbeats, and the service's cleanup when the driver goes).
//
// The owner goroutine calls add and tick; the requests run on goroutines
// of their own (a slow service never holds the owner); Stop calls goodbye
// once the owner has ended.
type services struct {
	app, token string
	every      time.Duration
	log        logrus.FieldLogger
	known      []backend.ShuffleService
	clients    map[string]*http.Client // by pin
	last       time.Time               // the last heartbeat round
	busy       bool                    // a round is in flight (owner-only, cleared through done)
	done       chan struct{}           // closed when the round in flight ends
	wg         sync.WaitGroup
}

// serviceTimeout bounds one request to a service.
const serviceTimeout = 10 * time.Second

func newServices(secret string, every time.Duration, log logrus.FieldLogger) *services {
	app := shuffleconf.AppID(secret)
	return &services{app: app, token: shuffleconf.Token(secret, app), every: every, log: log, clients: map[string]*http.Client{}}
}

// add registers newly named services with a first heartbeat.
func (s *services) add(svcs []backend.ShuffleService) {
	s.known = append(s.known, svcs...)
	s.send(svcs, http.MethodPost, "/heartbeat")
}

// tick sends a heartbeat round when one is due and none is in flight.
func (s *services) tick(now time.Time) {
	if len(s.known) == 0 || now.Sub(s.last) < s.every {
		return
	}
	if s.busy {
		select {
		case <-s.done:
		default:
			return
		}
	}
	s.last, s.busy, s.done = now, true, make(chan struct{})
	done := s.done
	wg := s.send(s.known, http.MethodPost, "/heartbeat")
	go func() { wg.Wait(); close(done) }()
}

// goodbye tells every service the application ended (DELETE: its files
// go), after the heartbeats in flight.
func (s *services) goodbye(ctx context.Context) {
	s.wg.Wait()
	if len(s.known) == 0 {
		return
	}
	wg := s.sendCtx(ctx, s.known, http.MethodDelete, "")
	wg.Wait()
	for _, c := range s.clients {
		c.CloseIdleConnections()
	}
	s.log.Debugf("coarse: told %d shuffle service(s) application %s ended", len(s.known), s.app)
}

func (s *services) send(svcs []backend.ShuffleService, method, suffix string) *sync.WaitGroup {
	return s.sendCtx(context.Background(), svcs, method, suffix)
}

// sendCtx sends one request to each service, each on its own goroutine.
func (s *services) sendCtx(ctx context.Context, svcs []backend.ShuffleService, method, suffix string) *sync.WaitGroup {
	var round sync.WaitGroup
	for _, svc := range svcs {
		c, err := s.client(svc.Pin)
		if err != nil {
			s.log.Warnf("coarse: shuffle service %s: %v", svc.BaseURL, err)
			continue
		}
		round.Add(1)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer round.Done()
			if err := s.request(ctx, c, method, svc.BaseURL+shuffleconf.ServiceAPIPrefix+s.app+suffix); err != nil {
				s.log.Warnf("coarse: shuffle service %s: %v", svc.BaseURL, err)
			}
		}()
	}
	return &round
}

func (s *services) request(ctx context.Context, c *http.Client, method, url string) error {
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
func (s *services) client(pin string) (*http.Client, error) {
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
