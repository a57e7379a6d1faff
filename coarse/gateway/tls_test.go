package gateway_test

import (
	"errors"
	"testing"
	"time"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/executor/coarseexec"
	"github.com/flint-mesos/flint/framework/tlspin"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// Over TLS an executor pinning the gateway's certificate registers and runs
// tasks; one connecting in plaintext or pinning another certificate never
// registers and gives up after its timeout.
func TestTLSStreamWithAPinnedCertificate(t *testing.T) {
	srv, pin, err := tlspin.Server("127.0.0.1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	gw := startGateway(t, rec, func(c *gateway.Config) { c.TLS = srv })
	reg := testRegistry(nil)
	startExecutor(t, gw.Addr().String(), func(c *coarseexec.Config) { c.Registry, c.DriverCertSHA256 = reg, pin })
	rec.waitRegistered(t)
	td := encodeInt(t, reg, "noop", 0)
	td.TaskId = 1
	if err := gw.Launch("exec-1", td); err != nil {
		t.Fatal(err)
	}
	rec.waitState(t, 1, flintpb.TaskState_TASK_FINISHED)

	_, otherPin, err := tlspin.Server("127.0.0.1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for what, pin := range map[string]string{"plaintext": "", "another certificate": otherPin} {
		run := startExecutor(t, gw.Addr().String(), func(c *coarseexec.Config) {
			c.ExecutorID, c.DriverCertSHA256, c.Timeout = "exec-"+what, pin, time.Second
		})
		if err := run.wait(t, 10*time.Second); !errors.Is(err, coarseexec.ErrDriverUnreachable) {
			t.Errorf("%s: Run = %v, want ErrDriverUnreachable", what, err)
		}
	}
	if got := gw.Executors(); len(got) != 1 {
		t.Fatalf("executors %+v, want only the pinned one", got)
	}
}
