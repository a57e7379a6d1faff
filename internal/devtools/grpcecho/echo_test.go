package grpcecho_test

import (
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/internal/devtools/grpcecho"
)

func TestMain(m *testing.M) {
	if code, ran := grpcecho.MaybeClientMain(); ran {
		os.Exit(code)
	}
	goleak.VerifyTestMain(m)
}

func startServer(t *testing.T) *grpcecho.Server {
	t.Helper()
	s, err := grpcecho.Listen()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestInProcessRoundTrips(t *testing.T) {
	s := startServer(t)
	c, err := grpcecho.Dial(s.Addr(), 8)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, n := range []int{0, 1, 7, 1000} {
		if err := c.Run(n, 8); err != nil {
			t.Fatalf("Run(%d): %v", n, err)
		}
	}
}

func TestRunFailsWhenTheServerGoes(t *testing.T) {
	s, err := grpcecho.Listen()
	if err != nil {
		t.Fatal(err)
	}
	c, err := grpcecho.Dial(s.Addr(), 4)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Run(10, 4); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := c.Run(1000, 4); err == nil {
		t.Fatal("Run after the server stopped succeeded")
	}
}

func TestChildProcesses(t *testing.T) {
	s := startServer(t)
	cl, err := grpcecho.StartClients(os.Args[0], s, 2, 16)
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := cl.Run(500); err != nil {
			t.Fatal(err)
		}
	}
	if err := cl.Close(); err != nil {
		t.Fatalf("clients did not exit cleanly: %v", err)
	}
}

func TestClientMainRejectsABadCommand(t *testing.T) {
	s := startServer(t)
	var out strings.Builder
	err := grpcecho.ClientMain(s.Addr(), 2, strings.NewReader("3\nthree\n"), &out)
	if err == nil || !strings.Contains(err.Error(), `bad command "three"`) {
		t.Fatalf("err = %v, want a bad command error", err)
	}
	if out.String() != "done\n" {
		t.Fatalf("out = %q, want one done line for the good command", out.String())
	}
}
