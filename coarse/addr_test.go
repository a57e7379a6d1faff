package coarse_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
)

// With flint.driver.bindAddress and fixed ports, the driver's servers listen
// on every interface at those ports while executors are told the advertised
// host, as a driver in a bridge-networked container needs.
func TestDriverBindAddressAndPorts(t *testing.T) {
	gwPort, filePort := mesostest.FreePort(t), mesostest.FreePort(t)
	c := startCluster(t, clusterOpts{agents: 1})
	r := mustRun(t, mesosURL(c), "flint.driver.host=127.0.0.1", "flint.driver.bindAddress=0.0.0.0",
		"flint.driver.port="+strconv.Itoa(gwPort), "flint.driver.fileServer.port="+strconv.Itoa(filePort))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := framework.Map(ctx, r.fc, double, ints(20))
	if err != nil {
		t.Fatal(err)
	}
	if out[19] != 38 {
		t.Fatalf("results %v", out)
	}
	procs := r.executors()
	if len(procs) == 0 || procs[0].driverURL != "127.0.0.1:"+strconv.Itoa(gwPort) {
		t.Fatalf("executors were told %+v, want FLINT_DRIVER_URL 127.0.0.1:%d", procs, gwPort)
	}
	if want := "binary http://127.0.0.1:" + strconv.Itoa(filePort) + "/files/"; !strings.Contains(r.logs.String(), want) {
		t.Fatalf("logs lack %q: the executor binary was not served at the fixed port", want)
	}
	for _, p := range []int{gwPort, filePort} {
		if l, err := net.Listen("tcp", "0.0.0.0:"+strconv.Itoa(p)); err == nil {
			l.Close()
			t.Fatalf("nothing listens on 0.0.0.0:%d", p)
		}
	}
}

// With flint.network.tls.enabled=false executors get no certificate pin
// and jobs run in plaintext (TLS, the default, is checked by
// TestExamplesOnMesos).
func TestPlaintextBetweenDriverAndExecutors(t *testing.T) {
	c := startCluster(t, clusterOpts{agents: 1})
	r := mustRun(t, mesosURL(c), "flint.network.tls.enabled=false")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := framework.Map(ctx, r.fc, double, ints(50))
	if err != nil {
		t.Fatal(err)
	}
	if out[49] != 98 {
		t.Fatalf("results %v", out)
	}
	procs := r.executors()
	if len(procs) == 0 || procs[0].certPin != "" {
		t.Fatalf("executors %+v: want no FLINT_DRIVER_CERT_SHA256", procs)
	}
}
