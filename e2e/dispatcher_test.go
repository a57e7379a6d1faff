package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	dc "github.com/ory/dockertest/v3/docker"

	"github.com/flint-mesos/flint/deploy/dispatcher"
)

const dispatcherPort = "7077"

// TestDispatcherClusterMode runs `flint dispatcher` in its own container
// beside a master and two agents, submits the pi example in cluster mode
// from the host with the host's `flint submit` (which uploads itself), and
// checks that the driver ran as a Mesos task on an agent, printed its
// estimate in its sandbox and ended FINISHED.
func TestDispatcherClusterMode(t *testing.T) {
	c := newCluster(t, 2)
	d := c.startDispatcher()
	id := d.submit("--driver-memory", "512m", "--example", "pi", "--", "4", "1000")
	st := d.waitFinished(id)
	ran := c.agentNamed(st.WorkerHostPort)
	if logs := c.sandboxLogs(ran); !regexp.MustCompile(`Pi is roughly 3\.\d+ \(4 slices`).MatchString(logs) {
		t.Fatalf("no estimate in %s's sandboxes:\n%s", ran.name, logs)
	}
}

// TestDispatcherSupervisedDriverAgentKilled: the agent running a supervised
// driver is killed (docker kill: the driver dies with it); the master
// removes the agent, the dispatcher relaunches the driver on the other
// agent, and the job completes there.
func TestDispatcherSupervisedDriverAgentKilled(t *testing.T) {
	c := newCluster(t, 2)
	d := c.startDispatcher()
	id := d.submit("--supervise", "--driver-memory", "512m", "--example", "pi", "--", "8", "5000000")
	var st dispatcher.StatusResponse
	c.waitFor(2*time.Minute, "the driver to run", func() (bool, string) {
		st, _ = d.client.Status(context.Background(), id)
		return st.DriverState == dispatcher.Running, string(st.DriverState)
	})
	victim := c.agentNamed(st.WorkerHostPort)
	if err := c.pool.Client.KillContainer(dockerKill(victim.id)); err != nil {
		t.Fatal(err)
	}
	st = d.waitFinished(id)
	if st.Attempts != 2 || st.WorkerHostPort == victim.name {
		t.Fatalf("finished on %s after %d attempts; want the other agent, attempt 2", st.WorkerHostPort, st.Attempts)
	}
	if logs := c.sandboxLogs(c.agentNamed(st.WorkerHostPort)); !regexp.MustCompile(`Pi is roughly 3\.\d+ \(8 slices`).MatchString(logs) {
		t.Fatalf("no estimate in the relaunched driver's sandbox:\n%s", logs)
	}
}

// dispatcherNode is a `flint dispatcher` container and a client of it on the host.
type dispatcherNode struct {
	c                        *cluster
	n                        *node
	master, tokenFile, flint string
	client                   *dispatcher.Client
}

// startDispatcher starts `flint dispatcher` in a container of the cluster
// and reads its token.
func (c *cluster) startDispatcher() *dispatcherNode {
	c.t.Helper()
	n := c.start("dispatcher", dispatcherPort, "dispatcher", "--master", "mesos://master:"+masterPort,
		"--host", "0.0.0.0", "--port", dispatcherPort, "--store", "/tmp/dispatcher", "--token-file", "/tmp/dispatcher/token")
	var token string
	c.waitFor(30*time.Second, "the dispatcher's token file", func() (bool, string) {
		b, err := c.fileOf(n, "/tmp/dispatcher/token")
		token = strings.TrimSpace(string(b))
		return err == nil && token != "", "not yet written"
	})
	d := &dispatcherNode{c: c, n: n, tokenFile: filepath.Join(c.t.TempDir(), "token"), flint: hostFlint(c.t),
		master: "mesos://" + strings.TrimPrefix(n.hostURL, "http://")}
	if err := os.WriteFile(d.tokenFile, []byte(token+"\n"), 0o600); err != nil {
		c.t.Fatal(err)
	}
	var err error
	if d.client, err = dispatcher.ClientFor(d.master, token); err != nil {
		c.t.Fatal(err)
	}
	return d
}

// submit runs the host's `flint submit --deploy-mode cluster` and returns
// the submission id it printed.
func (d *dispatcherNode) submit(args ...string) string {
	d.c.t.Helper()
	cmd := exec.Command(d.flint, append([]string{"submit", "--deploy-mode", "cluster", "--master", d.master, "--token-file", d.tokenFile}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		d.c.t.Fatalf("flint submit: %v\n%s", err, errOut.String())
	}
	return strings.TrimSpace(out.String())
}

// waitFinished waits until the driver is FINISHED (failing at once if it
// ends otherwise).
func (d *dispatcherNode) waitFinished(id string) dispatcher.StatusResponse {
	d.c.t.Helper()
	var st dispatcher.StatusResponse
	d.c.waitFor(3*time.Minute, "driver "+id+" to finish", func() (bool, string) {
		var err error
		st, err = d.client.Status(context.Background(), id)
		if err != nil {
			return false, err.Error()
		}
		if st.DriverState.Terminal() && st.DriverState != dispatcher.Finished {
			d.c.t.Fatalf("driver %s ended %s: %s", id, st.DriverState, st.Message)
		}
		return st.DriverState == dispatcher.Finished, string(st.DriverState) + " " + st.Message
	})
	return st
}

// agentNamed is the agent whose host name is name.
func (c *cluster) agentNamed(name string) *node {
	c.t.Helper()
	for _, a := range c.agents {
		if a.name == name {
			return a
		}
	}
	c.t.Fatalf("%q is not an agent", name)
	return nil
}

// fileOf reads one file of a container.
func (c *cluster) fileOf(n *node, path string) ([]byte, error) {
	var buf bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.pool.Client.DownloadFromContainer(n.id, dc.DownloadFromContainerOptions{Path: path, OutputStream: &buf, Context: ctx}); err != nil {
		return nil, err
	}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, errors.New("not in the archive")
		}
		if h.Typeflag == tar.TypeReg {
			return io.ReadAll(tr)
		}
	}
}

var hostFlintBuild struct {
	once sync.Once
	bin  string
	err  error
}

// hostFlint builds a static flint for the host once: the same binary runs
// in the agents' FROM-scratch containers when it uploads itself.
func hostFlint(t *testing.T) string {
	t.Helper()
	hostFlintBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "flint-e2e-host-")
		if err != nil {
			hostFlintBuild.err = err
			return
		}
		hostFlintBuild.bin = filepath.Join(dir, "flint")
		cmd := exec.Command("go", "build", "-trimpath", "-o", hostFlintBuild.bin, "./cmd/flint")
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
		if out, err := cmd.CombinedOutput(); err != nil {
			hostFlintBuild.err = fmt.Errorf("build flint: %w\n%s", err, out)
		}
	})
	if hostFlintBuild.err != nil {
		t.Fatal(hostFlintBuild.err)
	}
	return hostFlintBuild.bin
}
