package s3server

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/waitfor"
)

// Test credentials of the server's root account. They are listed in
// scripts/test-secrets.txt: the suite fails if any log holds them.
const (
	AccessKey = "AKIDflintS3test7c41"
	SecretKey = "s3-secret-key-5e9a2f7b13d8"
	Region    = "us-east-1"
)

// Env names the variable that overrides the binary's path.
const Env = "FLINT_VERSITYGW"

// BuildCommand is what builds the binary (the Makefile's versitygw target).
const BuildCommand = "make versitygw"

// Server is a running versitygw.
type Server struct {
	// Endpoint is the server's URL, http://127.0.0.1:PORT.
	Endpoint string
	// Addr is its host:port.
	Addr string
	// Root is the posix backend's directory: each bucket is a directory in it.
	Root string

	cmd  *exec.Cmd
	done chan struct{}
	mu   sync.Mutex
	out  bytes.Buffer
}

// Binary is the versitygw to run: $FLINT_VERSITYGW, else bin/versitygw at the root of the
// module holding the working directory.
func Binary() (string, error) {
	if p := os.Getenv(Env); p != "" {
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "bin", "versitygw"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("s3server: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Start starts a server for t, with the given buckets, stopped when t ends. extra are more
// global flags (e.g. "--virtual-domain", "s3.test").
func Start(t testing.TB, buckets []string, extra ...string) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("s3server: the S3 server binary %s is missing (%v): build it with `%s` (or set %s)", bin, err, BuildCommand, Env)
	}
	root := t.TempDir()
	for _, b := range buckets {
		if err := os.Mkdir(filepath.Join(root, b), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var last error
	for range 3 { // a port picked free may be taken before the server binds it
		s, err := start(t, bin, root, extra)
		if err == nil {
			return s
		}
		last = err
	}
	t.Fatalf("s3server: %v", last)
	return nil
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func start(t testing.TB, bin, root string, extra []string) (*Server, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Endpoint: "http://" + addr, Addr: addr, Root: root, done: make(chan struct{})}
	args := append([]string{"--access", AccessKey, "--secret", SecretKey, "--region", Region, "--port", addr, "--quiet"}, extra...)
	args = append(args, "posix", "--sidecar", filepath.Join(t.TempDir()), root)
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = s, s
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	up := waitfor.Poll(30*time.Second, func() bool {
		select {
		case <-s.done:
			return true
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	select {
	case <-s.done:
		return nil, fmt.Errorf("versitygw exited at start: %s", s.Output())
	default:
	}
	if !up {
		s.stop()
		return nil, fmt.Errorf("versitygw did not listen on %s within 30s: %s", addr, s.Output())
	}
	t.Cleanup(func() { s.stop(); keepLog(t, s.Output()) })
	return s, nil
}

// Write collects the server's output (io.Writer for the process).
func (s *Server) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Write(b)
}

// Output is what the server printed so far.
func (s *Server) Output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// Stop kills the server and waits for it (tests of an unreachable store).
func (s *Server) Stop() { s.stop() }

func (s *Server) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Kill()
	<-s.done
}

// Conf is the flint configuration that reaches the server: endpoint, region, path-style
// addressing and the root account's keys.
func (s *Server) Conf() []string {
	return []string{
		"flint.s3.endpoint=" + s.Endpoint,
		"flint.s3.region=" + Region,
		"flint.s3.pathStyleAccess=true",
		"flint.s3.accessKey=" + AccessKey,
		"flint.s3.secretKey=" + SecretKey,
	}
}

func keepLog(t testing.TB, text string) {
	root := os.Getenv("FLINT_TEST_LOG_DIR")
	if root == "" {
		return
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	if err := os.MkdirAll(root, 0o755); err != nil {
		return
	}
	os.WriteFile(filepath.Join(root, name+"-versitygw-"+fmt.Sprint(time.Now().UnixNano())+".log"), []byte(text), 0o644)
}
