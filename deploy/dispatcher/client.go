package dispatcher

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Client talks to a dispatcher's REST API (flint submit --deploy-mode cluster,
// flint status, flint kill). Given several dispatchers (a leader and its
// standbys under ZooKeeper), a request goes to the one that answered last and
// moves on to the others when it is unreachable or a standby; a Client is then
// not for concurrent use.
type Client struct {
	URL       string   // http://host:port
	Fallbacks []string // other dispatchers' URLs, tried in order after URL
	Token     string   // "" sends none
	HTTP      *http.Client
}

// ClientFor parses a dispatcher's address as flint submit takes it:
// mesos://host:port (Spark's form for a Mesos cluster-mode dispatcher), or
// http(s)://host:port; several dispatchers as mesos://h1:7077,h2:7077.
func ClientFor(master, token string) (*Client, error) {
	bad := fmt.Errorf("dispatcher: %q: want mesos://HOST:PORT, the dispatcher's address", master)
	scheme, rest, ok := strings.Cut(master, "://")
	if !ok {
		return nil, bad
	}
	switch scheme {
	case "mesos":
		scheme = "http"
	case "http", "https":
	default:
		return nil, bad
	}
	hosts, p, _ := strings.Cut(rest, "/")
	if strings.HasPrefix(hosts, "zk:") || p != "" {
		return nil, fmt.Errorf("dispatcher: %q: cluster mode talks to a dispatcher (mesos://HOST:PORT), not to a master through ZooKeeper", master)
	}
	var urls []string
	for h := range strings.SplitSeq(hosts, ",") {
		u, err := url.Parse(scheme + "://" + strings.TrimSpace(h))
		if err != nil || u.Host == "" || u.User != nil {
			return nil, bad
		}
		urls = append(urls, u.Scheme+"://"+u.Host)
	}
	return &Client{URL: urls[0], Fallbacks: urls[1:], Token: token, HTTP: &http.Client{Timeout: 10 * time.Minute}}, nil
}

// ReadToken reads a token file (trailing newline dropped).
func ReadToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("dispatcher: token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// APIError is a dispatcher's refusal.
type APIError struct {
	Code    int
	Message string
}

func (e *APIError) Error() string { return fmt.Sprintf("dispatcher: %s (HTTP %d)", e.Message, e.Code) }

func (c *Client) do(ctx context.Context, method, path string, body io.Reader, hdr http.Header, out any) error {
	urls := append([]string{c.URL}, c.Fallbacks...)
	var err error
	for i, u := range urls {
		if i > 0 {
			s, ok := body.(io.Seeker)
			if body != nil && !ok {
				return err // the body cannot be sent again
			}
			if ok {
				if _, serr := s.Seek(0, io.SeekStart); serr != nil {
					return err
				}
			}
		}
		var next bool
		next, err = c.doOne(ctx, u, method, path, body, hdr, out)
		if !next {
			if err == nil && i > 0 { // ask this one first from now on
				c.URL, c.Fallbacks = u, append(urls[:i:i], urls[i+1:]...)
			}
			return err
		}
	}
	return err
}

// doOne sends one request to the dispatcher at base; next reports that another
// dispatcher should be tried (this one is unreachable or a standby).
func (c *Client) doOne(ctx context.Context, base, method, path string, body io.Reader, hdr http.Header, out any) (next bool, err error) {
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return false, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return ctx.Err() == nil, fmt.Errorf("dispatcher: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return false, fmt.Errorf("dispatcher: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Message string }
		if json.Unmarshal(raw, &e) != nil || e.Message == "" {
			e.Message = strings.TrimSpace(string(raw))
		}
		standby := resp.StatusCode == http.StatusServiceUnavailable && strings.HasPrefix(e.Message, StandbyPrefix)
		return standby, &APIError{Code: resp.StatusCode, Message: e.Message}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return false, fmt.Errorf("dispatcher: reply: %w", err)
	}
	return false, nil
}

// Upload sends a local program and returns its appResource (sha256:<hex>).
func (c *Client) Upload(ctx context.Context, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("dispatcher: upload: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("dispatcher: upload: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("dispatcher: upload: %w", err)
	}
	return c.UploadReader(ctx, filepath.Base(path), hexOf(h.Sum(nil)), f)
}

// UploadReader sends a program's bytes with their declared SHA-256.
func (c *Client) UploadReader(ctx context.Context, name, sha string, r io.Reader) (string, error) {
	var out struct {
		AppResource string `json:"appResource"`
	}
	hdr := http.Header{"X-Flint-Sha256": {sha}, "Content-Type": {"application/octet-stream"}}
	if err := c.do(ctx, http.MethodPost, "/v1/binaries?name="+url.QueryEscape(name), r, hdr, &out); err != nil {
		return "", err
	}
	return out.AppResource, nil
}

// Create submits a driver and returns its submission id.
func (c *Client) Create(ctx context.Context, req CreateRequest) (string, error) {
	req.Action = "CreateSubmissionRequest"
	var out CreateResponse
	if err := c.do(ctx, http.MethodPost, "/v1/submissions/create", bytes.NewReader(encodeJSON(req)), http.Header{"Content-Type": {"application/json"}}, &out); err != nil {
		return "", err
	}
	if !out.Success || out.SubmissionID == "" {
		return "", errors.New("dispatcher: " + out.Message)
	}
	return out.SubmissionID, nil
}

// Status returns a driver's status.
func (c *Client) Status(ctx context.Context, id string) (StatusResponse, error) {
	var out StatusResponse
	err := c.do(ctx, http.MethodGet, "/v1/submissions/status/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// Kill asks for a driver's end.
func (c *Client) Kill(ctx context.Context, id string) (KillResponse, error) {
	var out KillResponse
	err := c.do(ctx, http.MethodPost, "/v1/submissions/kill/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// List returns every driver's status.
func (c *Client) List(ctx context.Context) ([]StatusResponse, error) {
	var out []StatusResponse
	err := c.do(ctx, http.MethodGet, "/v1/submissions", nil, nil, &out)
	return out, err
}

// Wait polls a driver's status every interval until it is terminal.
func (c *Client) Wait(ctx context.Context, id string, interval time.Duration) (StatusResponse, error) {
	for {
		st, err := c.Status(ctx, id)
		if err != nil {
			return st, err
		}
		if st.DriverState.Terminal() {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, ctx.Err()
		case <-time.After(interval):
		}
	}
}
