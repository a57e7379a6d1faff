package coarseexec

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestFromEnvReadsAndUnsetsSecret(t *testing.T) {
	t.Setenv(contract.EnvDriverURL, "grpc://driver:7077")
	t.Setenv(contract.EnvExecutorID, "3")
	t.Setenv(contract.EnvCores, "4")
	t.Setenv(contract.EnvToken, "s3cret")
	t.Setenv(contract.EnvHost, "agent-host")
	t.Setenv(contract.EnvAgentID, "a-1")
	t.Setenv(contract.EnvTimeout, "30")
	cfg, err := FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.DriverURL != "grpc://driver:7077" || cfg.ExecutorID != "3" || cfg.Cores != 4 || cfg.Token != "s3cret" ||
		cfg.Host != "agent-host" || cfg.AgentID != "a-1" || cfg.Timeout != 30*time.Second {
		t.Fatalf("FromEnv = %+v", cfg)
	}
	if v, ok := os.LookupEnv(contract.EnvToken); ok {
		t.Fatalf("%s still set to %q", contract.EnvToken, v)
	}
	d, _ := cfg.withDefaults()
	if d.DriverURL != "driver:7077" {
		t.Fatalf("grpc:// prefix kept: %q", d.DriverURL)
	}
}

func TestFromEnvReportsEveryProblem(t *testing.T) {
	env := map[string]string{contract.EnvCores: "four", contract.EnvTimeout: "soon"}
	_, err := fromEnv(func(k string) string { return env[k] })
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{contract.EnvCores, contract.EnvTimeout, contract.EnvDriverURL, contract.EnvExecutorID, contract.EnvToken} {
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

// A driver that never answers: Run retries with exponential backoff
// (10, 20, 40, then 50 ms apart) and gives up exactly when Timeout has
// passed on its clock. The clock is a clock.Fake the test advances: each
// retry waits for it, so the attempts and the moment Run gives up are
// exact however slow the machine is.
func TestUnreachableDriver(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close() // nothing listens there now
	const timeout = 700 * time.Millisecond
	clk := clock.NewFake(time.Time{})
	start := clk.Now()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), Config{DriverURL: addr, ExecutorID: "e", Cores: 1, Token: "s",
			Timeout: timeout, RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond, Clock: clk})
	}()
	waits := retrySchedule(10*time.Millisecond, 50*time.Millisecond, timeout)
	for i, d := range waits {
		waitfor.True(t, 30*time.Second, fmt.Sprintf("retry %d to wait %s", i+1, d), func() bool { return clk.HasPending(d) })
		select {
		case err := <-done:
			t.Fatalf("Run returned after %d of %d waits: %v", i, len(waits), err)
		default:
		}
		clk.Advance(d)
	}
	err = <-done
	if !errors.Is(err, ErrDriverUnreachable) || !strings.Contains(err.Error(), addr) {
		t.Fatalf("Run: %v", err)
	}
	if d := clk.Now().Sub(start); d != timeout {
		t.Fatalf("gave up at start+%s on its clock, want %s", d, timeout)
	}
}

// retrySchedule is the backoff the executor's reconnection loop waits
// between attempts: doubling from lo to at most hi, the last wait cut to
// end at total.
func retrySchedule(lo, hi, total time.Duration) []time.Duration {
	var out []time.Duration
	for sum, w := time.Duration(0), lo; sum < total; w = min(2*w, hi) {
		d := min(w, total-sum)
		out = append(out, d)
		sum += d
	}
	return out
}

func TestRunReturnsOnCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err := Run(ctx, Config{DriverURL: "127.0.0.1:1", ExecutorID: "e", Cores: 1, Token: "s", Timeout: time.Minute})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Run: %v", err)
	}
}

// A driver never reached is given up on after FirstTimeout, not the
// (longer) Timeout meant for a driver that was there and went away.
func TestNeverReachedDriverGivesUpSooner(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	err = Run(context.Background(), Config{DriverURL: addr, ExecutorID: "e", Cores: 1, Token: "s",
		Timeout: time.Hour, FirstTimeout: 300 * time.Millisecond, RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond})
	if want := addr + " for more than 300ms, never reached"; !errors.Is(err, ErrDriverUnreachable) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Run: %v; want ErrDriverUnreachable saying %q", err, want)
	}
}
