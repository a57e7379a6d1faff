package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	dc "github.com/ory/dockertest/v3/docker"

	"github.com/flint-mesos/flint/deploy/dispatcher"
)

const dispatcherPort = "7077"

// TestDispatcher runs `flint dispatcher` in its own container beside a
// master and two agents: one cluster for its subtests, which run in order
// (the last one kills an agent).
func TestDispatcher(t *testing.T) {
	c := newCluster(t, 2)
	d := c.startDispatcher()
	// ClusterMode submits the pi example in cluster mode from the host with
	// the host's `flint submit` (which uploads itself), and checks that the
	// driver ran as a Mesos task on an agent, printed its estimate in its
	// sandbox and ended FINISHED.
	t.Run("ClusterMode", func(t *testing.T) {
		defer c.as(t)()
		id := d.submit("--driver-memory", "512m", "--example", "pi", "--", "4", "1000")
		st := d.waitFinished(id)
		if out := d.driverStdout(st); !regexp.MustCompile(`Pi is roughly 3\.\d+ \(4 slices`).MatchString(out) {
			t.Fatalf("no estimate in the driver's stdout on %s:\n%s", st.WorkerHostPort, out)
		}
	})
	// SupervisedDriverAgentKilled: the agent running a supervised driver is
	// killed (docker kill: the driver dies with it); the master removes the
	// agent, the dispatcher relaunches the driver on the other agent, and the
	// job completes there.
	t.Run("SupervisedDriverAgentKilled", func(t *testing.T) {
		defer c.as(t)()
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
		if out := d.driverStdout(st); !regexp.MustCompile(`Pi is roughly 3\.\d+ \(8 slices`).MatchString(out) {
			t.Fatalf("no estimate in the relaunched driver's stdout on %s:\n%s", st.WorkerHostPort, out)
		}
	})
}

// as makes t (a subtest's) the test the cluster's helpers report to, until
// the returned function restores the previous one.
func (c *cluster) as(t *testing.T) (restore func()) {
	old := c.t
	c.t = t
	return func() { c.t = old }
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
	d := &dispatcherNode{c: c, n: n, tokenFile: filepath.Join(c.t.TempDir(), "token"), flint: staticFlint(c.t),
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

// driverStdout is the stdout of a driver's task, read through its agent's
// /files/read (copying the agent's sandboxes out of the container would
// carry every fetched flint binary too: tens of MB, and over 30 s under
// load). The sandbox is <work dir>/slaves/<agent>/frameworks/<the
// dispatcher's framework>/executors/<task>/runs/latest.
func (d *dispatcherNode) driverStdout(st dispatcher.StatusResponse) string {
	c := d.c
	c.t.Helper()
	ms, err := c.masterState()
	if err != nil {
		c.t.Fatal(err)
	}
	var fw string
	for _, f := range ms.Frameworks {
		if f.Name == "flint-dispatcher" {
			fw = f.ID
		}
	}
	if fw == "" {
		c.t.Fatalf("the master lists no flint-dispatcher framework: %+v", ms.Frameworks)
	}
	p := path.Join(agentWorkDir, "slaves", st.WorkerID, "frameworks", fw, "executors", st.TaskID, "runs", "latest", "stdout")
	var out struct {
		Data string `json:"data"`
	}
	if err := c.getJSON(c.agentNamed(st.WorkerHostPort).hostURL+"/files/read?offset=0&path="+url.QueryEscape(p), &out); err != nil {
		c.t.Fatalf("driver stdout: %v", err)
	}
	return out.Data
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
