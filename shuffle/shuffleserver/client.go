package shuffleserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/flint-mesos/flint/framework/tlspin"
)

// ErrTimeout is wrapped when a fetch made no progress for the client's
// timeout (flint.shuffle.io.connectionTimeout).
var ErrTimeout = errors.New("shuffleserver: no progress within the timeout")

// StatusError is a server's refusal: its HTTP status and message.
type StatusError struct {
	Code    int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("shuffleserver: server answered %d %s: %s", e.Code, http.StatusText(e.Code), e.Message)
}

// Retryable reports whether asking again may help: not for a missing
// output, a refused credential or a bad request.
func (e *StatusError) Retryable() bool { return e.Code >= 500 }

// Client fetches blocks for one application. One per executor is enough:
// it keeps a pool of connections to each server. Safe for concurrent use.
type Client struct {
	appID, token string
	timeout      time.Duration
	mu           sync.Mutex
	transports   map[string]*http.Transport // by Address.String()
}

// NewClient fetches with the application's shuffle token; a fetch that
// makes no progress for timeout fails with ErrTimeout.
func NewClient(appID, token string, timeout time.Duration) *Client {
	return &Client{appID: appID, token: token, timeout: timeout, transports: map[string]*http.Transport{}}
}

func (c *Client) transport(a Address) (*http.Transport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := a.BaseURL() + "#" + a.Pin
	if t, ok := c.transports[key]; ok {
		return t, nil
	}
	d := &net.Dialer{Timeout: c.timeout, KeepAlive: 30 * time.Second}
	// The fetch's watchdog bounds dialing, the handshake and the headers
	// (and each read of the body), so the transport sets no timeouts of
	// its own.
	t := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second,
		DisableCompression: true}
	if a.Pin != "" {
		tc, err := tlspin.Client(a.Pin)
		if err != nil {
			return nil, fmt.Errorf("shuffleserver: %w", err)
		}
		t.TLSClientConfig = tc
		t.ForceAttemptHTTP2 = false
		t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	c.transports[key] = t
	return t, nil
}

// Fetch reads block (shuffleID, mapIndex, reduce) from the server at a,
// appending its bytes to dst.
func (c *Client) Fetch(ctx context.Context, a Address, shuffleID, mapIndex, reduce int, dst []byte) ([]byte, error) {
	t, err := c.transport(a)
	if err != nil {
		return dst, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchdog := time.AfterFunc(c.timeout, func() { cancel(ErrTimeout) })
	defer watchdog.Stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.BaseURL()+a.RequestPath(c.appID, shuffleID, mapIndex, reduce), nil)
	if err != nil {
		return dst, fmt.Errorf("shuffleserver: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := t.RoundTrip(req)
	if err != nil {
		return dst, c.cause(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return dst, &StatusError{Code: resp.StatusCode, Message: strings.TrimSpace(string(msg))}
	}
	if resp.ContentLength < 0 {
		return dst, errors.New("shuffleserver: block response without a length")
	}
	start := len(dst)
	if cap(dst)-start < int(resp.ContentLength) {
		dst = append(dst[:cap(dst)], make([]byte, start+int(resp.ContentLength)-cap(dst))...)
	}
	dst = dst[:start+int(resp.ContentLength)]
	body := progressReader{r: resp.Body, watchdog: watchdog, timeout: c.timeout}
	if _, err := io.ReadFull(body, dst[start:]); err != nil {
		return dst[:start], c.cause(ctx, fmt.Errorf("reading a block of %d bytes: %w", resp.ContentLength, err))
	}
	return dst, nil
}

// cause prefers the watchdog's ErrTimeout to the cancellation it caused.
func (c *Client) cause(ctx context.Context, err error) error {
	var ne net.Error
	if cause := context.Cause(ctx); errors.Is(cause, ErrTimeout) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%w (%v): %w", ErrTimeout, c.timeout, err)
	}
	return fmt.Errorf("shuffleserver: %w", err)
}

// progressReader re-arms the watchdog whenever bytes arrive.
type progressReader struct {
	r        io.Reader
	watchdog *time.Timer
	timeout  time.Duration
}

func (p progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.watchdog.Reset(p.timeout)
	}
	return n, err
}

// Close drops idle connections.
func (c *Client) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.transports {
		t.CloseIdleConnections()
	}
}
