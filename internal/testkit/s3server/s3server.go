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

	"github.com/flint-mesos/flint/internal/testkit/waitfor"
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
	dir  string // StartMain's directory, removed by Close
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
	root, side := t.TempDir(), t.TempDir()
	s, err := launch(root, side, buckets, extra)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.stop(); keepLog(t.Name(), s.Output()) })
	return s
}

// StartMain starts a server for a whole test binary (from TestMain, where there is no
// testing.TB: the three-mode suites, whose shared Contexts outlive any one test), in a
// temporary directory. Close stops it, keeps its log and removes the directory.
func StartMain(buckets []string, extra ...string) (*Server, error) {
	dir, err := os.MkdirTemp("", "flint-s3server-")
	if err != nil {
		return nil, err
	}
	root, side := filepath.Join(dir, "root"), filepath.Join(dir, "sidecar")
	for _, d := range []string{root, side} {
		if err := os.Mkdir(d, 0o755); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	s, err := launch(root, side, buckets, extra)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	s.dir = dir
	return s, nil
}

// Close stops a server StartMain started, keeps its log with the suite's and removes its
// directory.
func (s *Server) Close() error {
	s.stop()
	keepLog(filepath.Base(os.Args[0])+"-TestMain", s.Output())
	return os.RemoveAll(s.dir)
}

// launch starts a server on a free port with root as its posix backend and side as its
// sidecar directory, with the given buckets.
func launch(root, side string, buckets []string, extra []string) (*Server, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("s3server: the S3 server binary %s is missing (%v): build it with `%s` (or set %s)", bin, err, BuildCommand, Env)
	}
	for _, b := range buckets {
		if err := os.Mkdir(filepath.Join(root, b), 0o755); err != nil {
			return nil, err
		}
	}
	var last error
	for range 3 { // a port picked free may be taken before the server binds it
		s, err := start(bin, root, side, extra)
		if err == nil {
			return s, nil
		}
		last = err
	}
	return nil, fmt.Errorf("s3server: %w", last)
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func start(bin, root, side string, extra []string) (*Server, error) {
	addr, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Endpoint: "http://" + addr, Addr: addr, Root: root, done: make(chan struct{})}
	args := append([]string{"--access", AccessKey, "--secret", SecretKey, "--region", Region, "--port", addr, "--quiet"}, extra...)
	args = append(args, "posix", "--sidecar", side, root)
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

func keepLog(testName, text string) {
	root := os.Getenv("FLINT_TEST_LOG_DIR")
	if root == "" {
		return
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(testName)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return
	}
	os.WriteFile(filepath.Join(root, name+"-versitygw-"+fmt.Sprint(time.Now().UnixNano())+".log"), []byte(text), 0o644)
}
