package link

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/mesos/mesos-go/api/v1/lib/recordio"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/internal/mailbox"
)

// HTTP paths of the transport, served by the master next to its public APIs.
const (
	RegisterPath = "/internal/agent/v1/register"
	MessagePath  = "/internal/agent/v1/message"
	// AgentIDHeader names the sending agent on MessagePath requests.
	AgentIDHeader = "Flint-Agent-Id"
	// maxMessage caps one decoded message (a RunTask carries task data).
	maxMessage = 64 << 20
)

// HandlerConfig configures the master side of the HTTP transport.
type HandlerConfig struct {
	// Secret, when set, must be presented by agents as a bearer token.
	Secret string
	Logger logrus.FieldLogger
}

// Handler serves the agent protocol for m over HTTP.
func Handler(m Master, cfg HandlerConfig) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = logrus.StandardLogger()
	}
	h := &handler{m: m, cfg: cfg}
	mux := http.NewServeMux()
	mux.HandleFunc(RegisterPath, h.register)
	mux.HandleFunc(MessagePath, h.message)
	return mux
}

type handler struct {
	m   Master
	cfg HandlerConfig
}

func (h *handler) authorized(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "Expecting 'POST', received '"+r.Method+"'", http.StatusMethodNotAllowed)
		return false
	}
	if h.cfg.Secret == "" {
		return true
	}
	if r.Header.Get("Authorization") != "Bearer "+h.cfg.Secret {
		w.Header().Set("WWW-Authenticate", `Bearer realm="minimesos-agent"`)
		http.Error(w, "agent authentication failed", http.StatusUnauthorized)
		return false
	}
	return true
}

func decodeBody(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxMessage+1))
	if err != nil {
		return fmt.Errorf("read body: %w", err)
	}
	if len(body) > maxMessage {
		return fmt.Errorf("body exceeds %d bytes", maxMessage)
	}
	return json.Unmarshal(body, v)
}

// register answers a registration with a stream: the Registered record, then
// every MasterMessage delivered to this connection.
func (h *handler) register(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(w, r) {
		return
	}
	var reg Registration
	if err := decodeBody(r, &reg); err != nil {
		http.Error(w, "Failed to parse body into Registration: "+err.Error(), http.StatusBadRequest)
		return
	}
	conn := newStreamAgent()
	ack, err := h.m.RegisterAgent(r.Context(), reg, conn)
	if err != nil {
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	err = conn.pump(r.Context(), w, &ack)
	conn.close()
	h.m.AgentDisconnected(ack.AgentID.Value, conn)
	h.cfg.Logger.WithField("agent", ack.AgentID.Value).Infof("agent stream ended: %v", err)
}

func (h *handler) message(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(w, r) {
		return
	}
	id := r.Header.Get(AgentIDHeader)
	if id == "" {
		http.Error(w, "missing "+AgentIDHeader+" header", http.StatusBadRequest)
		return
	}
	var m AgentMessage
	if err := decodeBody(r, &m); err != nil {
		http.Error(w, "Failed to parse body into AgentMessage: "+err.Error(), http.StatusBadRequest)
		return
	}
	if err := h.m.FromAgent(r.Context(), id, m); err != nil {
		http.Error(w, err.Error(), statusOf(err))
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

func statusOf(err error) int {
	if errors.Is(err, ErrUnknownAgent) {
		return http.StatusNotFound
	}
	return http.StatusBadRequest
}

// streamAgent is the master's handle on an agent connected over HTTP:
// Deliver queues messages (never blocking the master) for the stream writer.
type streamAgent struct {
	inbox *mailbox.Mailbox[MasterMessage]
}

func newStreamAgent() *streamAgent { return &streamAgent{inbox: mailbox.New[MasterMessage]()} }

// Deliver implements Agent.
func (s *streamAgent) Deliver(m MasterMessage) error {
	if !s.inbox.Put(m) {
		return ErrClosed
	}
	return nil
}

func (s *streamAgent) close() { s.inbox.Close() }

// pump writes the Registered record, then queued messages, until the
// request ends or a write fails.
func (s *streamAgent) pump(ctx context.Context, w http.ResponseWriter, first *Registered) error {
	if err := writeRecord(w, first); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.inbox.Wake():
		}
		for _, m := range s.inbox.Take(nil) {
			if err := writeRecord(w, &m); err != nil {
				return err
			}
		}
	}
}

func writeRecord(w http.ResponseWriter, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("link: encode: %w", err)
	}
	if _, err := io.WriteString(w, strconv.Itoa(len(b))+"\n"); err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return err
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

// Client is the agent side of the HTTP transport: a Master reached over HTTP.
type Client struct {
	base   string // guarded by mu (SetBase)
	secret string
	http   *http.Client
	log    logrus.FieldLogger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	stream  io.Closer // the current registration stream
	agentID string
}

var _ Master = (*Client)(nil)

// ClientConfig configures Dial.
type ClientConfig struct {
	Secret string
	// HTTPClient must not set a total timeout (the stream is long-lived).
	HTTPClient *http.Client
	Logger     logrus.FieldLogger
}

// Dial returns a Master reached at base ("http://host:port"). Nothing is
// sent until RegisterAgent.
func Dial(base string, cfg ClientConfig) *Client {
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{}
	}
	if cfg.Logger == nil {
		cfg.Logger = logrus.StandardLogger()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Client{base: strings.TrimSuffix(base, "/"), secret: cfg.Secret, http: cfg.HTTPClient, log: cfg.Logger, ctx: ctx, cancel: cancel}
}

// SetBase points the client at another master ("http://host:port"), as a
// Mesos agent's master detector does when ZooKeeper elects a new leader;
// requests from then on go there (the agent re-registers to move its
// registration stream).
func (c *Client) SetBase(base string) {
	c.mu.Lock()
	c.base = strings.TrimSuffix(base, "/")
	c.mu.Unlock()
}

func (c *Client) baseURL() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base
}

func (c *Client) post(ctx context.Context, path string, v any, agentID string) (*http.Response, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("link: encode: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL()+path, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("link: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if agentID != "" {
		req.Header.Set(AgentIDHeader, agentID)
	}
	if c.secret != "" {
		req.Header.Set("Authorization", "Bearer "+c.secret)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("link: %s: %w", path, err)
	}
	return resp, nil
}

func responseError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	msg := strings.TrimSpace(string(body))
	if resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("%w: %s", ErrUnknownAgent, msg)
	}
	return fmt.Errorf("link: master answered %s: %s", resp.Status, msg)
}

// RegisterAgent implements Master: it opens the registration stream and
// delivers the master's messages to to from a goroutine until the stream
// ends, Close is called, or the agent registers again.
func (c *Client) RegisterAgent(ctx context.Context, r Registration, to Agent) (Registered, error) {
	// The stream outlives ctx, which only bounds the wait for the answer.
	streamCtx, cancel := context.WithCancel(c.ctx)
	stop := context.AfterFunc(ctx, cancel)
	resp, err := c.post(streamCtx, RegisterPath, &r, "")
	if err != nil {
		cancel()
		return Registered{}, err
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		return Registered{}, responseError(resp)
	}
	rd := recordio.NewReader(resp.Body, recordio.MaxMessageSize(maxMessage))
	var ack Registered
	err = readRecord(rd, &ack)
	if !stop() || err != nil {
		resp.Body.Close()
		cancel()
		return Registered{}, fmt.Errorf("link: read registration answer: %w", errors.Join(err, ctx.Err()))
	}
	c.mu.Lock()
	if c.stream != nil {
		c.stream.Close()
	}
	c.stream, c.agentID = resp.Body, ack.AgentID.Value
	c.mu.Unlock()
	c.wg.Add(1)
	go func() {
		defer cancel()
		c.receive(resp.Body, rd, to)
	}()
	return ack, nil
}

type frameReader interface{ ReadFrame() ([]byte, error) }

func readRecord(rd frameReader, v any) error {
	b, err := rd.ReadFrame()
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func (c *Client) receive(body io.ReadCloser, rd frameReader, to Agent) {
	defer c.wg.Done()
	defer body.Close()
	for {
		var m MasterMessage
		if err := readRecord(rd, &m); err != nil {
			if c.ctx.Err() == nil {
				c.log.Warnf("link: stream from master ended: %v", err)
			}
			c.mu.Lock()
			if c.stream == body {
				c.stream = nil
			}
			c.mu.Unlock()
			return
		}
		if err := to.Deliver(m); err != nil {
			c.log.Warnf("link: deliver: %v", err)
		}
	}
}

// Connected reports whether the registration stream is open.
func (c *Client) Connected() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stream != nil
}

// FromAgent implements Master by POSTing the message. It fails with
// ErrClosed when the registration stream is gone, so the agent re-registers.
func (c *Client) FromAgent(ctx context.Context, agentID string, m AgentMessage) error {
	if !c.Connected() {
		return ErrClosed
	}
	resp, err := c.post(ctx, MessagePath, &m, agentID)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusAccepted {
		return responseError(resp)
	}
	resp.Body.Close()
	return nil
}

// AgentDisconnected implements Master: the client drops its stream.
func (c *Client) AgentDisconnected(string, Agent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stream != nil {
		c.stream.Close()
		c.stream = nil
	}
}

// Close ends the stream and waits for the receiving goroutine.
func (c *Client) Close() error {
	c.cancel()
	c.AgentDisconnected("", nil)
	c.wg.Wait()
	return nil
}
