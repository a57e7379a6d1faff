package coarse

import (
	"context"
	"errors"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFromEnvReadsAndUnsetsSecret(t *testing.T) {
	t.Setenv(EnvDriverURL, "grpc://driver:7077")
	t.Setenv(EnvExecutorID, "3")
	t.Setenv(EnvCores, "4")
	t.Setenv(EnvToken, "s3cret")
	t.Setenv(EnvHost, "agent-host")
	t.Setenv(EnvAgentID, "a-1")
	t.Setenv(EnvTimeout, "30")
	cfg, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DriverURL != "grpc://driver:7077" || cfg.ExecutorID != "3" || cfg.Cores != 4 || cfg.Token != "s3cret" ||
		cfg.Host != "agent-host" || cfg.AgentID != "a-1" || cfg.Timeout != 30*time.Second {
		t.Fatalf("FromEnv = %+v", cfg)
	}
	if v, ok := os.LookupEnv(EnvToken); ok {
		t.Fatalf("%s still set to %q", EnvToken, v)
	}
	d, _ := cfg.withDefaults()
	if d.DriverURL != "driver:7077" {
		t.Fatalf("grpc:// prefix kept: %q", d.DriverURL)
	}
}

func TestFromEnvReportsEveryProblem(t *testing.T) {
	env := map[string]string{EnvCores: "four", EnvTimeout: "soon"}
	_, err := fromEnv(func(k string) string { return env[k] })
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{EnvCores, EnvTimeout, EnvDriverURL, EnvExecutorID, EnvToken} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not mention %s: %v", want, err)
		}
	}
}

func TestRunRejectsBadConfig(t *testing.T) {
	err := Run(context.Background(), Config{DriverURL: "x:1", ExecutorID: "e", Cores: 1, Token: "s", ChunkSize: 10, MaxMessageSize: 10})
	if err == nil || !strings.Contains(err.Error(), "ChunkSize") {
		t.Fatalf("Run: %v", err)
	}
}

// A driver that never answers: Run gives up after Timeout without spinning.
func TestUnreachableDriver(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nothing listens there now
	const timeout = 700 * time.Millisecond
	start := time.Now()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = Run(context.Background(), Config{DriverURL: addr, ExecutorID: "e", Cores: 1, Token: "s",
		Timeout: timeout, RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond})
	runtime.ReadMemStats(&after)
	elapsed := time.Since(start)
	if !errors.Is(err, ErrDriverUnreachable) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("Run: %v", err)
	}
	if elapsed < timeout || elapsed > timeout+time.Second {
		t.Fatalf("gave up after %s, want about %s", elapsed, timeout)
	}
	// Backoff, not a busy loop: a few dozen attempts at most.
	if n := after.Mallocs - before.Mallocs; n > 2_000_000 {
		t.Fatalf("%d allocations while waiting: spinning?", n)
	}
}

func TestRunReturnsOnCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := Run(ctx, Config{DriverURL: "127.0.0.1:1", ExecutorID: "e", Cores: 1, Token: "s", Timeout: time.Minute})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run: %v", err)
	}
}
