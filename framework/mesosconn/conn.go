package mesosconn

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/mesosconn/detector"
)

// Errors. Wrapped errors name the master URL or the call.
var (
	ErrNotSubscribed    = errors.New("mesosconn: not subscribed")
	ErrHeartbeatTimeout = errors.New("mesosconn: no event within the heartbeat window")
	ErrLeaderChanged    = errors.New("mesosconn: the leading master changed")
	ErrAuth             = errors.New("mesosconn: authentication refused")
	ErrRefused          = errors.New("mesosconn: the master refused the framework")
	ErrStartTimeout     = errors.New("mesosconn: could not subscribe in time")
	ErrStopped          = errors.New("mesosconn: stopped")
	ErrTeardownTimeout  = errors.New("mesosconn: the framework was not torn down in time")
)

// Conn is Flint's one connection to a Mesos master, shared by the coarse and fine backends.
type Conn struct {
	cfg       Config
	h         Handler
	log       logrus.FieldLogger
	clock     Clock
	scheme    string
	codec     encoding.Codec
	do        httpcli.DoFunc
	transport *http.Transport
	backoff   *Backoff

	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	kickCh   chan struct{} // wakes the control goroutine
	leaderCh chan struct{} // the leader changed
	subCh    chan struct{} // a subscription began (Stop's teardown waits for one)
	tdMu     sync.Mutex    // held while a TEARDOWN is in flight
	first    chan error    // outcome of the first subscription
	done     chan struct{} // closed when the Conn stops for good
	doneOnce sync.Once
	stopOnce sync.Once

	mu             sync.Mutex
	leader         detector.Leader
	lastLeader     detector.Leader // the last non-zero leader reported
	caller         calls.Caller    // the live subscription's; nil when not subscribed
	frameworkID    string
	master         mesos.MasterInfo
	subscribedOnce bool
	// warnedUnreachable: the one warning about a master not reached
	// before the first subscription was logged.
	warnedUnreachable bool
	stopping          bool
	tearingDown       bool  // Stop waits for a master to accept TEARDOWN: keep subscribing
	saidRecovering    bool  // the one message about a recovering master was logged
	err               error // why the Conn gave up
	lastErr           error // the last subscription failure
	demand            bool
	wantRevive        bool
	wantSuppress      bool
	lastOffer         time.Time
	lastRevive        time.Time
	nextPeriodic      time.Time
	tasks             map[string]*trackedTask
}

// Start subscribes to the leading master and returns once the first SUBSCRIBED event has been
// handled. It fails at once when authentication is refused or the master answers with an ERROR
// event, and after cfg.StartTimeout when no master could be reached (naming the URL and the
// last error). ctx bounds only this wait: the Conn runs until Stop. The Conn begins with
// demand on (not suppressed), as a fresh subscription is.
func Start(ctx context.Context, cfg Config, h Handler) (*Conn, error) {
	cfg = cfg.withDefaults()
	c := &Conn{
		cfg: cfg, h: h, log: cfg.Logger, clock: cfg.Clock, scheme: "http",
		codec:    codecs.ByMediaType[codecs.MediaTypeProtobuf],
		backoff:  NewBackoff(cfg.MinBackoff, cfg.MaxBackoff, cfg.BackoffJitter, cfg.Rand),
		kickCh:   make(chan struct{}, 1),
		leaderCh: make(chan struct{}, 1),
		subCh:    make(chan struct{}, 1),
		first:    make(chan error, 1),
		done:     make(chan struct{}),
		demand:   true,
		tasks:    map[string]*trackedTask{},
	}
	if cfg.Codec == JSON {
		c.codec = jsonCodec
	}
	det := cfg.Detector
	if det == nil {
		u, err := detector.ParseMaster(cfg.Master)
		if err != nil {
			return nil, err
		}
		c.scheme, det = u.Scheme, detector.New(u, cfg.Logger)
	}
	if cfg.TLS != nil {
		c.scheme = "https"
	}
	c.cfg.Master = cmp.Or(c.cfg.Master, "(detector)")
	c.transport = &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialNoLinger(&net.Dialer{Timeout: cfg.CallTimeout, KeepAlive: 30 * time.Second}),
		ResponseHeaderTimeout: cfg.CallTimeout,
		TLSHandshakeTimeout:   cfg.CallTimeout,
		TLSClientConfig:       cfg.TLS,
		MaxIdleConnsPerHost:   2,
	}
	opts := []httpcli.ConfigOpt{httpcli.RoundTripper(c.transport)}
	if cfg.Secret != "" {
		opts = append(opts, httpcli.BasicAuth(cfg.Principal, cfg.Secret))
	}
	c.do = httpcli.With(opts...)
	c.frameworkID = cfg.FrameworkID
	c.ctx, c.cancel = context.WithCancel(context.Background())

	leaders := det.Watch(c.ctx)
	c.wg.Add(3)
	go c.trackLeader(leaders)
	go c.run()
	go c.control()

	timeout := c.clock.After(cfg.StartTimeout)
	var err error
	select {
	case err = <-c.first:
	case <-timeout:
		c.mu.Lock()
		err = &StartTimeoutError{Master: c.cfg.Master, After: cfg.StartTimeout, Cause: c.lastErr}
		c.mu.Unlock()
	case <-ctx.Done():
		err = fmt.Errorf("mesosconn: subscribing to %s: %w", c.cfg.Master, ctx.Err())
	}
	if err != nil {
		c.shutdown()
		return nil, err
	}
	return c, nil
}

// trackLeader records the detector's reports and signals changes.
func (c *Conn) trackLeader(leaders <-chan detector.Leader) {
	defer c.wg.Done()
	for l := range leaders {
		c.mu.Lock()
		changed := !l.Same(c.leader)
		c.leader = l
		if !l.IsZero() {
			c.lastLeader = l
		}
		c.mu.Unlock()
		if changed {
			// Failures with the previous leader say nothing about this
			// one: its first refusals get the short delays again.
			c.backoff.Reset()
			notify(c.leaderCh)
		}
	}
}

func notify(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (c *Conn) kick() { notify(c.kickCh) }

// run subscribes, streams, and re-subscribes with backoff until stopped or aborted.
func (c *Conn) run() {
	defer c.wg.Done()
	for {
		l, ok := c.waitLeader()
		if !ok || !c.mayResubscribe() {
			return
		}
		err := c.session(l)
		if !c.mayResubscribe() {
			return
		}
		if errors.Is(err, ErrAuth) || errors.Is(err, ErrRefused) {
			c.abort(err)
			return
		}
		c.mu.Lock()
		c.lastErr = err
		c.mu.Unlock()
		// A session that died (of silence, a partition) may have left pooled
		// connections stalled: the next SUBSCRIBE must not queue behind one
		// and reach the master long after a later SUBSCRIBE succeeded, which
		// the master would take for a failover ending the live stream.
		c.transport.CloseIdleConnections()
		d := c.retryDelay(l, err)
		select {
		case <-c.clock.After(d):
		case <-c.leaderCh: // a new leader: try it at once
		case <-c.ctx.Done():
			return
		}
	}
}

func (c *Conn) waitLeader() (detector.Leader, bool) {
	warned := false
	for {
		c.mu.Lock()
		l := c.leader
		c.mu.Unlock()
		if !l.IsZero() {
			return l, true
		}
		if !warned {
			c.mu.Lock()
			ever := c.subscribedOnce
			c.mu.Unlock()
			// Before the first subscription the detector's first report is
			// usually a moment away; Start's timeout error says if not.
			if ever {
				c.log.Warnf("mesosconn: waiting for a leading master (%s)", c.cfg.Master)
			} else {
				c.log.Debugf("mesosconn: waiting for a leading master (%s)", c.cfg.Master)
			}
			warned = true
		}
		select {
		case <-c.leaderCh:
		case <-c.ctx.Done():
			return detector.Leader{}, false
		}
	}
}

func (c *Conn) isStopping() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopping
}

// abort gives up for good.
func (c *Conn) abort(err error) {
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
	c.log.WithError(err).Error("mesosconn: giving up")
	select {
	case c.first <- err:
	default:
	}
	c.h.Aborted(err)
	c.closeDone()
	c.cancel()
}

func (c *Conn) closeDone() { c.doneOnce.Do(func() { close(c.done) }) }

// shutdown stops every goroutine and waits for them.
func (c *Conn) shutdown() {
	c.cancel()
	c.wg.Wait()
	c.closeDone()
	c.transport.CloseIdleConnections()
}

// Done is closed when the Conn has stopped: by Stop, or on its own after Aborted.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err says why the Conn gave up (nil while running and after a plain Stop).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// FrameworkID is the framework's id ("" before the first subscription).
func (c *Conn) FrameworkID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.frameworkID
}

// Master is the MasterInfo of the last SUBSCRIBED event.
func (c *Conn) Master() mesos.MasterInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.master
}

// Subscribed reports whether a subscription is live now.
func (c *Conn) Subscribed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.caller != nil
}

// Stop ends the Conn and waits for all its goroutines (bounded by ctx). With teardown it first
// tears the framework down: it sends TEARDOWN, so the master kills the framework's tasks and
// forgets it, and returns once the master accepted it (202). When no subscription is live (a
// master election, a lost stream) it keeps subscribing to the leading master, with the Handler
// no longer called, and sends TEARDOWN as soon as it can, for up to TeardownTimeout (and ctx);
// past that it logs one warning saying that the framework may linger on the master and how
// to remove it, and returns a *TeardownError (ErrTeardownTimeout). A Conn that never
// subscribed, or whose framework the master refused, has nothing to tear down: Stop returns
// ErrNotSubscribed. Without teardown Stop only closes the stream, and the master keeps the
// tasks for the failover timeout so that a new driver can take over with WithFrameworkID.
// Stop must not be called from a Handler method.
func (c *Conn) Stop(ctx context.Context, teardown bool) error {
	err := ErrStopped
	c.stopOnce.Do(func() {
		err = nil
		c.mu.Lock()
		c.stopping = true
		c.tearingDown = teardown
		c.mu.Unlock()
		if teardown {
			err = c.teardown(ctx)
		}
		c.mu.Lock()
		c.tearingDown = false
		c.mu.Unlock()
		c.cancel()
		waited := make(chan struct{})
		go func() {
			c.wg.Wait()
			close(waited)
		}()
		select {
		case <-waited:
		case <-ctx.Done():
			err = errors.Join(err, fmt.Errorf("mesosconn: stop: %w", ctx.Err()))
		}
		c.closeDone()
		c.transport.CloseIdleConnections()
	})
	return err
}

// dialNoLinger dials with d and sets SO_LINGER to 0 on the connection, so
// that closing it (a call that timed out during a partition) discards what
// is still unsent instead of delivering a stale call to the master after
// the partition heals.
func dialNoLinger(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if tc, ok := conn.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		return conn, nil
	}
}
