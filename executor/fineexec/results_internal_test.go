package fineexec

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/framework/tlspin"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// With Settings.TLS the result server serves HTTPS with a certificate only
// its pin opens; plaintext requests get no result.
func TestResultServerOverTLS(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	rt, err := executor.New(executor.Config{ExecutorID: "e", Cores: 1, Registry: task.NewRegistry()}, func(*flintpb.StatusUpdate) {})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	rs, err := startResultServer(Settings{Secret: "s", DriverHost: "127.0.0.1", TLS: true}, rt, log)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.close()
	if !strings.HasPrefix(rs.url, "https://") || len(rs.pin) != 64 {
		t.Fatalf("url %q pin %q: want https and a SHA-256 pin", rs.url, rs.pin)
	}
	get := func(c *http.Client, url string) (int, error) {
		req, err := http.NewRequest(http.MethodGet, url+contract.ResultPath+"nope", nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer s")
		resp, err := c.Do(req)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	cfg, err := tlspin.Client(rs.pin)
	if err != nil {
		t.Fatal(err)
	}
	pinned := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
	defer pinned.CloseIdleConnections()
	if code, err := get(pinned, rs.url); err != nil || code != http.StatusNotFound {
		t.Fatalf("pinned client: %d, %v; want 404 for an unknown block", code, err)
	}
	plain := &http.Client{Transport: &http.Transport{}}
	defer plain.CloseIdleConnections()
	if code, err := get(plain, "http://"+strings.TrimPrefix(rs.url, "https://")); err == nil && code == http.StatusNotFound {
		t.Fatal("a plaintext request reached the result handler")
	}
}
