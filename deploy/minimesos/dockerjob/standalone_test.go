package dockerjob

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/testkit/burstcheck"
)

// Dynamic allocation and containerised executors on minimesos standalone:
// a separately started `flint mesos master` and `flint mesos agent
// --containerizers docker,mesos` (processes of the static flint, not the
// embedded master), `flint shuffle-service` on the agent's host, and the
// e2e suite's burst driver (e2e/internal/burst) with
// flint.dynamicAllocation.enabled (maxExecutors 2, executorIdleTimeout
// 2s), flint.shuffle.service.enabled and its executors in the scratch
// image under the Docker containerizer (the burst binary fetched into the
// sandbox, the service's directory mounted at the same path). The map
// tasks hold until 2 executors registered; the driver waits for both to be
// released (the short idle timeout is what it waits on); the second action
// reads the released executors' outputs from the service on new
// executors. Both actions' sums equal plain Go's, the map stage ran its 8
// tasks once, nothing failed.
func TestStandaloneDynamicAllocationInContainers(t *testing.T) {
	bin, image, gw := flintImage(t)
	ports := freePorts(t, gw, 2)
	masterAddr := net.JoinHostPort(gw, ports[0])
	tmp := t.TempDir()
	svcDir := filepath.Join(tmp, "shuffle-service")
	startProcess(t, "master", bin, "mesos", "master", "--listen", masterAddr, "--agent-ping-interval", "500ms")
	startProcess(t, "agent", bin, "mesos", "agent", "--master", masterAddr, "--listen", net.JoinHostPort(gw, ports[1]),
		"--hostname", gw, "--work-dir", filepath.Join(tmp, "agent"), "--containerizers", "docker,mesos",
		// Host ports Docker publishes: below Linux's ephemeral range
		// (32768–60999), where an outgoing connection of any process
		// may hold one ("bind: address already in use"), and apart from
		// the ranges other suites publish at the same time (e2e's
		// 31700–31719).
		"--resources", "cpus:3;mem:2048;disk:2048;ports:[30100-30199]")
	startProcess(t, "shuffle-service", bin, "shuffle-service", "--dir", svcDir, "--host", gw, "--port", "0")
	waitAgent(t, "http://"+masterAddr+"/state", filepath.Join(svcDir, "service.json"))

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, shared.burst, "--master", "mesos://"+masterAddr,
		"--conf", "flint.driver.host="+gw, "--conf", "flint.driver.bindAddress="+gw,
		"--conf", "flint.mesos.executor.docker.image="+image,
		"--conf", "flint.mesos.executor.docker.volumes="+svcDir+":"+svcDir,
		"--conf", "flint.executor.cores=1", "--conf", "flint.executor.memory=256m",
		"--conf", "flint.shuffle.service.enabled=true", "--conf", "flint.shuffle.service.dir="+svcDir,
		"--conf", "flint.dynamicAllocation.enabled=true", "--conf", "flint.dynamicAllocation.maxExecutors=2",
		"--conf", "flint.dynamicAllocation.executorIdleTimeout=2s",
		"--", "--executors", "2", "--gate-host", gw, "--n", "20000")
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("burst driver: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	r, err := burstcheck.Parse(stdout.String())
	if err != nil {
		t.Fatal(err)
	}
	burstcheck.CheckSums(t, r, 20000)
	burstcheck.CheckReleased(t, r, 2)
	if !strings.Contains(stderr.String(), " added on "+gw) {
		t.Errorf("want executors added on %s:\n%s", gw, stderr.String())
	}
}

// freePorts are n ports free on host now (each listened on, then closed).
func freePorts(t *testing.T, host string, n int) []string {
	t.Helper()
	var ports []string
	for range n {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Fatal(err)
		}
		_, p, _ := net.SplitHostPort(l.Addr().String())
		ports = append(ports, p)
		defer l.Close()
	}
	return ports
}

// startProcess starts bin args as a process ended (SIGTERM, then killed
// after 10 s) when the test ends; its output is logged if the test failed.
func startProcess(t *testing.T, name, bin string, args ...string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("===== %s (%s) =====\n%s", name, strings.Join(args, " "), out.String())
		}
	})
}

// waitAgent waits until the master's /state lists one active agent and
// the shuffle service has written its service file.
func waitAgent(t *testing.T, stateURL, serviceFile string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	last := ""
	for ; ; <-tick.C {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for the agent and the shuffle service; last: %s", last)
		}
		if _, err := os.Stat(serviceFile); err != nil {
			last = err.Error()
			continue
		}
		resp, err := client.Get(stateURL)
		if err != nil {
			last = err.Error()
			continue
		}
		var st struct {
			Slaves []struct{ Active bool } `json:"slaves"`
		}
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err == nil && len(st.Slaves) == 1 && st.Slaves[0].Active {
			return
		}
		last = fmt.Sprintf("agents %+v (%v)", st.Slaves, err)
	}
}
