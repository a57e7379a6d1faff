package fineexec

import (
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
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
	rs, err := startResultServer(Settings{Secret: "s", DriverHost: "127.0.0.1", TLS: true}, rt, log, "")
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

// In a container the result server listens on the port the backend mapped
// (FLINT_RESULT_PORT, on FLINT_EXECUTOR_BIND_ADDRESS) and advertises the
// agent's host with the agent's port (FLINT_RESULT_HOST_PORT).
func TestResultServerInAContainer(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	rt, err := executor.New(executor.Config{ExecutorID: "e", Cores: 1, Registry: task.NewRegistry()}, func(*flintpb.StatusUpdate) {})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(context.Background())
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := lis.Addr().(*net.TCPAddr).Port
	lis.Close()
	t.Setenv(contract.EnvResultPort, strconv.Itoa(port))
	t.Setenv(contract.EnvResultHostPort, "31007")
	t.Setenv(contract.EnvBindAddress, "127.0.0.1")
	rs, err := startResultServer(Settings{Secret: "s", DriverHost: "127.0.0.1"}, rt, log, "agent-7.example")
	if err != nil {
		t.Fatal(err)
	}
	defer rs.close()
	if rs.url != "http://agent-7.example:31007" {
		t.Fatalf("advertised %q, want the agent's host and mapped port", rs.url)
	}
	req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1:"+strconv.Itoa(port)+contract.ResultPath+"nope", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer s")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("nothing listens on the container port %d: %v", port, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("container port answered %d, want the result handler's 404", resp.StatusCode)
	}
	t.Setenv(contract.EnvResultPort, "99999")
	if _, err := startResultServer(Settings{Secret: "s", DriverHost: "127.0.0.1"}, rt, log, "h"); err == nil || !strings.Contains(err.Error(), contract.EnvResultPort) {
		t.Fatalf("a bad port: %v, want an error naming %s", err, contract.EnvResultPort)
	}
}

// The result server's advertised address: the agent's host and mapped
// port in a container on Docker's bridge; the address it listens on when
// bound to one (a bare process, or a container bound to its address);
// loopback for every address outside a container.
func TestResultServerAdvertised(t *testing.T) {
	for _, c := range []struct {
		bind           string
		port, hostPort int
		want           string
	}{
		{"0.0.0.0", 31007, 31007, "agent-7.example:31007"},
		{"10.0.0.5", 31007, 0, "10.0.0.5:4000"},
		{"10.0.0.5", 0, 0, "10.0.0.5:4000"},
		{"", 0, 0, "127.0.0.1:4000"},
		{"0.0.0.0", 0, 0, "127.0.0.1:4000"},
	} {
		got, err := advertised(c.bind, 4000, "agent-7.example", c.port, c.hostPort)
		if err != nil || got != c.want {
			t.Errorf("advertised(%q, 4000, agent, %d, %d) = %q, %v; want %q", c.bind, c.port, c.hostPort, got, err, c.want)
		}
	}
}
