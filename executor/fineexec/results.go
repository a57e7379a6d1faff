package fineexec

import (
	"cmp"
	"context"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/framework/tlspin"
	"github.com/flint-mesos/flint/internal/localip"
)

// resultServer serves the results the runtime kept to the driver.
type resultServer struct {
	srv *http.Server
	url string
	pin string // SHA-256 of the TLS certificate; "" when plaintext
}

// certValidity is how long the result server's self-signed certificate is
// valid: longer than any executor is expected to run.
const certValidity = 5 * 365 * 24 * time.Hour

// startResultServer listens on the local address that routes to the
// driver (all addresses when that cannot be found) — or, in a container,
// on the port the backend mapped (contract.EnvResultPort, on
// EnvBindAddress), advertising the agent's host and port
// (EnvResultHostPort) or, without one, its own address (advertised).
func startResultServer(set Settings, rt *executor.Runtime, log logrus.FieldLogger, agentHost string) (*resultServer, error) {
	host := localip.TowardsOrEmpty(set.DriverHost)
	port, hostPort, err := containerPorts(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("fine: result server: %w", err)
	}
	if port > 0 {
		host = cmp.Or(os.Getenv(contract.EnvBindAddress), host)
	}
	lis, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("fine: result server: %w", err)
	}
	adv, err := advertised(host, lis.Addr().(*net.TCPAddr).Port, agentHost, port, hostPort)
	if err != nil {
		lis.Close()
		return nil, fmt.Errorf("fine: result server: %w", err)
	}
	rs := &resultServer{url: "http://" + adv}
	if set.TLS {
		h, _, _ := net.SplitHostPort(adv)
		cfg, pin, err := tlspin.Server(h, certValidity)
		if err != nil {
			lis.Close()
			return nil, fmt.Errorf("fine: result server: %w", err)
		}
		lis, rs.pin = tls.NewListener(lis, cfg), pin
		rs.url = "https://" + adv
	}
	rs.srv = &http.Server{Handler: resultHandler(set.Secret, rt, log), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := rs.srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.WithError(err).Error("fine: result server stopped")
		}
	}()
	return rs, nil
}

// advertised is where the driver reaches the result server listening on
// bind:listened: in a container, where localip.Reached says (the agent's
// host and mapped port, or the container's own address on a network of
// its own); else the address it listens on (loopback when that is every
// address).
func advertised(bind string, listened int, agentHost string, port, hostPort int) (string, error) {
	adv, err := localip.Reached(agentHost, bind, port, hostPort)
	if adv != "" || err != nil {
		return adv, err
	}
	if bind == "" || bind == "0.0.0.0" {
		bind = "127.0.0.1"
	}
	return net.JoinHostPort(bind, strconv.Itoa(listened)), nil
}

func (rs *resultServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = rs.srv.Shutdown(ctx)
}

// resultHandler answers GET (the bytes) and DELETE (release) of kept
// results for requests bearing the secret.
func resultHandler(secret string, rt *executor.Runtime, log logrus.FieldLogger) http.Handler {
	want := []byte("Bearer " + secret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="flint-executor"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		block, ok := strings.CutPrefix(r.URL.Path, contract.ResultPath)
		if !ok || block == "" || strings.Contains(block, "/") {
			http.NotFound(w, r)
			return
		}
		switch r.Method {
		case http.MethodGet:
			data, err := rt.FetchResult(block)
			if err != nil {
				http.Error(w, err.Error(), http.StatusNotFound)
				return
			}
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Header().Set("Content-Length", strconv.Itoa(len(data)))
			_, _ = w.Write(data)
		case http.MethodDelete:
			rt.ReleaseResult(block)
			w.WriteHeader(http.StatusNoContent)
		default:
			w.Header().Set("Allow", "GET, DELETE")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
		log.Debugf("fine: result %s: %s", block, r.Method)
	})
}

func nilCtx() context.Context { return context.Background() }

// containerPorts reads the result server's port in a container and the
// agent's port mapped to it (contract.EnvResultPort, EnvResultHostPort);
// zeros when unset.
func containerPorts(getenv func(string) string) (port, hostPort int, err error) {
	for _, v := range []struct {
		name string
		to   *int
	}{{contract.EnvResultPort, &port}, {contract.EnvResultHostPort, &hostPort}} {
		s := getenv(v.name)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 65535 {
			return 0, 0, fmt.Errorf("%s=%q is not a port", v.name, s)
		}
		*v.to = n
	}
	return port, hostPort, nil
}
