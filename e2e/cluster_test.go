package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ory/dockertest/v3"
	dc "github.com/ory/dockertest/v3/docker"
)

const (
	masterPort   = "5050"
	agentPort    = "5051"
	agentWorkDir = "/tmp/flint-agent"
	// agentResources are each agent's resources: one coarse executor per
	// agent takes them all (2 task slots).
	agentResources = "cpus:2;mem:2048"
	// pollEvery is how often waitFor polls.
	pollEvery = 100 * time.Millisecond
)

// masterFlags are the master's flags in every test: an address the other
// containers reach (--listen on all interfaces, --hostname its network
// alias), agents removed after 3 missed pings at 500ms (so a killed agent is
// lost within seconds) and offers made as soon as resources are freed (as
// Flint's embedded master does: fine mode, one Mesos task per Flint task,
// is otherwise paced by the 1s batch allocation interval, as on Mesos).
var masterFlags = []string{
	"mesos", "master", "--listen", "0.0.0.0:" + masterPort, "--hostname", "master",
	"--agent-ping-interval", "500ms", "--agent-max-missed-pings", "3", "--allocate-on-release",
}

// cluster is one test's hosts: containers on a private Docker network,
// each with a fixed host name that is also its network alias.
type cluster struct {
	t      *testing.T
	pool   *dockertest.Pool
	image  string
	net    *dockertest.Network
	nodes  []*node // in start order, for the failure dump
	master *node
	agents []*node
	http   *http.Client
}

// node is a container.
type node struct {
	name    string // host name and network alias: master, agent1, driver
	cname   string // container name, unique per run
	id      string // container id
	ip      string // its address on the cluster network
	port    string // its HTTP port published on 127.0.0.1, if any
	hostURL string // http://127.0.0.1:port of its published HTTP port, if any
	agent   bool
	workDir string // an agent's work dir in its container
	// shuffleDir is, on a Docker cluster's agent, a host directory at the
	// same path in its container for its shuffle service.
	shuffleDir string
}

// newCluster starts a master and n agents on a new network and waits until
// the master lists the n agents. Everything is removed when the test ends;
// when it failed, every container's log (and the agents' executor sandbox
// logs) is dumped first.
func newCluster(t *testing.T, agents int) *cluster {
	t.Helper()
	return newClusterWith(t, agents)
}

// newClusterWith is newCluster with masterExtra appended to the master's
// flags (masterFlags).
func newClusterWith(t *testing.T, agents int, masterExtra ...string) *cluster {
	t.Helper()
	c := newNetwork(t)
	c.master = c.start("master", masterPort, append(slices.Clone(masterFlags), masterExtra...)...)
	for i := 1; i <= agents; i++ {
		c.startAgent(fmt.Sprintf("agent%d", i), agentWorkDir, nil, "--resources", agentResources)
	}
	c.waitAgents(agents)
	return c
}

// newNetwork is a cluster with no host yet: its network, removed (with
// every container on it) when the test ends.
func newNetwork(t *testing.T) *cluster {
	t.Helper()
	pool, image := setup(t)
	c := &cluster{t: t, pool: pool, image: image,
		http: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}}
	name := fmt.Sprintf("flint-e2e-%s-%s", runID, sanitize(t.Name()))
	nw, err := pool.CreateNetwork(name, func(o *dc.CreateNetworkOptions) {
		o.Labels = map[string]string{"flint-e2e": runID}
	})
	if err != nil {
		t.Fatalf("create Docker network %s: %v", name, err)
	}
	c.net = nw
	t.Cleanup(c.cleanup)
	return c
}

// startAgent starts agent name (its host name and alias) with work dir
// workDir, binds mounted into its container, then extra flags.
func (c *cluster) startAgent(name, workDir string, binds []string, extra ...string) *node {
	c.t.Helper()
	args := append([]string{"mesos", "agent", "--master", "master:" + masterPort,
		"--listen", "0.0.0.0:" + agentPort, "--hostname", name, "--work-dir", workDir}, extra...)
	a := c.run(name, agentPort, nil, binds, args...)
	a.agent, a.workDir = true, workDir
	c.agents = append(c.agents, a)
	return a
}

func sanitize(s string) string {
	return strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(s, "-"))
}

// start creates and starts a container running flint with args, named and
// aliased name on the cluster network; port (if not empty) is published on
// 127.0.0.1 for the test to query.
func (c *cluster) start(name, port string, args ...string) *node {
	c.t.Helper()
	return c.startProgram(name, port, nil, args...)
}

// startProgram is start with the image's entrypoint replaced by
// entrypoint (nil: the image's, /flint).
func (c *cluster) startProgram(name, port string, entrypoint []string, args ...string) *node {
	c.t.Helper()
	return c.run(name, port, entrypoint, nil, args...)
}

// run is startProgram with binds (host:container paths) mounted.
func (c *cluster) run(name, port string, entrypoint, binds []string, args ...string) *node {
	c.t.Helper()
	n := &node{name: name, port: port, cname: fmt.Sprintf("flint-e2e-%s-%s-%s", runID, sanitize(c.t.Name()), name)}
	cfg := &dc.Config{Hostname: name, Image: c.image, Entrypoint: entrypoint, Cmd: args, Labels: map[string]string{"flint-e2e": runID}}
	hc := &dc.HostConfig{Binds: binds}
	if port != "" {
		p := dc.Port(port + "/tcp")
		cfg.ExposedPorts = map[dc.Port]struct{}{p: {}}
		hc.PortBindings = map[dc.Port][]dc.PortBinding{p: {{HostIP: "127.0.0.1"}}}
	}
	ctr, err := c.pool.Client.CreateContainer(dc.CreateContainerOptions{
		Name: n.cname, Config: cfg, HostConfig: hc,
		NetworkingConfig: &dc.NetworkingConfig{EndpointsConfig: map[string]*dc.EndpointConfig{
			c.net.Network.Name: {Aliases: []string{name}},
		}},
	})
	if err != nil {
		c.t.Fatalf("create container %s: %v", n.cname, err)
	}
	n.id = ctr.ID
	c.nodes = append(c.nodes, n)
	if err := c.pool.Client.StartContainer(n.id, nil); err != nil {
		c.t.Fatalf("start container %s: %v", n.cname, err)
	}
	c.waitAddress(n)
	return n
}

// waitAddress waits until n has an address on the cluster network and,
// when it publishes a port, a host port for it (both are read again after
// a partition heals: Docker publishes the port anew, on another host port).
func (c *cluster) waitAddress(n *node) {
	c.t.Helper()
	n.ip, n.hostURL = "", ""
	c.waitFor(10*time.Second, n.name+"'s network address", func() (bool, string) {
		info, err := c.pool.Client.InspectContainer(n.id)
		if err != nil {
			return false, err.Error()
		}
		if ep := info.NetworkSettings.Networks[c.net.Network.Name]; ep.IPAddress != "" {
			n.ip = ep.IPAddress
		}
		if n.port != "" {
			if b := info.NetworkSettings.Ports[dc.Port(n.port+"/tcp")]; len(b) > 0 && b[0].HostPort != "" {
				n.hostURL = "http://127.0.0.1:" + b[0].HostPort
			}
		}
		if !info.State.Running && !info.State.FinishedAt.IsZero() {
			if n.port != "" { // master and agents serve until the test ends
				c.t.Fatalf("%s exited with status %d", n.name, info.State.ExitCode)
			}
			return true, "" // a driver that already ended: wait reports it
		}
		return n.ip != "" && (n.port == "" || n.hostURL != ""), "not yet known"
	})
}

// disconnect partitions n from every other host: `docker network
// disconnect` takes its only interface away, so its connections stall
// (nothing is reset: peers see silence, as in a network partition) and new
// ones fail.
func (c *cluster) disconnect(n *node) {
	c.t.Helper()
	err := c.pool.Client.DisconnectNetwork(c.net.Network.ID, dc.NetworkConnectionOptions{Container: n.id})
	if err != nil {
		c.t.Fatalf("docker network disconnect %s %s: %v", c.net.Network.Name, n.cname, err)
	}
	c.t.Logf("partitioned %s (%s) from the network", n.name, n.ip)
}

// reconnect heals n's partition: `docker network connect` with its alias,
// then its address and published port are read again. It returns n's
// address before the partition: Docker hands the same one back when it is
// still free (the test network's other hosts keep theirs), and callers
// that need it check it.
func (c *cluster) reconnect(n *node) (oldIP string) {
	c.t.Helper()
	oldIP = n.ip
	err := c.pool.Client.ConnectNetwork(c.net.Network.ID, dc.NetworkConnectionOptions{Container: n.id,
		EndpointConfig: &dc.EndpointConfig{Aliases: []string{n.name}}})
	if err != nil {
		c.t.Fatalf("docker network connect %s %s: %v", c.net.Network.Name, n.cname, err)
	}
	c.waitAddress(n)
	c.t.Logf("reconnected %s (%s, was %s) to the network", n.name, n.ip, oldIP)
	return oldIP
}

// processes is the command line of every process in n's container.
func (c *cluster) processes(n *node) ([]string, error) {
	top, err := c.pool.Client.TopContainer(n.id, "")
	if err != nil {
		return nil, err
	}
	var cmds []string
	for _, p := range top.Processes {
		cmds = append(cmds, p[len(p)-1])
	}
	return cmds, nil
}

// onlyAgent reports whether cmds (processes) are the agent alone, beside
// the shuffle service an operator may run there (not an executor).
func onlyAgent(cmds []string) bool {
	agents := 0
	for _, cmd := range cmds {
		switch {
		case strings.HasPrefix(cmd, "/flint mesos agent"):
			agents++
		case !strings.HasPrefix(cmd, "/flint shuffle-service"):
			return false
		}
	}
	return agents == 1
}

// cleanup dumps the logs of a failed test, then removes the containers and
// the network.
func (c *cluster) cleanup() {
	if c.t.Failed() {
		c.dump()
	}
	for _, n := range c.nodes {
		if err := c.pool.Client.RemoveContainer(dc.RemoveContainerOptions{ID: n.id, Force: true, RemoveVolumes: true}); err != nil {
			c.t.Logf("remove container %s: %v", n.cname, err)
		}
	}
	c.removeOthers()
	if err := c.pool.RemoveNetwork(c.net); err != nil {
		c.t.Logf("remove network %s: %v", c.net.Network.Name, err)
	}
}

// dump logs every container's output, the agents' executor sandbox logs and
// the master's /state.
func (c *cluster) dump() {
	for _, n := range c.nodes {
		out, errOut := c.logs(n)
		c.t.Logf("===== %s (container %s, %s) stderr =====\n%s", n.name, n.cname, n.ip, errOut)
		if out != "" {
			c.t.Logf("===== %s stdout =====\n%s", n.name, out)
		}
		if n.agent {
			c.t.Logf("===== %s executor sandboxes (%s) =====\n%s", n.name, n.workDir, c.sandboxLogs(n))
		}
	}
	if st, err := c.rawGet(c.master.hostURL + "/state"); err == nil {
		c.t.Logf("===== master /state =====\n%s", st)
	}
}

// logs is a container's stdout and stderr so far.
func (c *cluster) logs(n *node) (stdout, stderr string) {
	var o, e bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c.pool.Client.Logs(dc.LogsOptions{Context: ctx, Container: n.id, OutputStream: &o, ErrorStream: &e,
		Stdout: true, Stderr: true})
	if err != nil {
		fmt.Fprintf(&e, "\n(reading the log failed: %v)", err)
	}
	return o.String(), e.String()
}

// sandboxLogs is the tail of every stdout and stderr file under the agent's
// work dir (executor and task sandboxes).
func (c *cluster) sandboxLogs(n *node) string {
	if n.shuffleDir != "" { // a Docker cluster's agent: its work dir is on the host
		return hostSandboxLogs(n.workDir)
	}
	var buf bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := c.pool.Client.DownloadFromContainer(n.id, dc.DownloadFromContainerOptions{Path: n.workDir + "/slaves",
		OutputStream: &buf, Context: ctx})
	if err != nil {
		return fmt.Sprintf("(cannot copy %s/slaves: %v)", n.workDir, err)
	}
	var out strings.Builder
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				fmt.Fprintf(&out, "(reading the archive: %v)\n", err)
			}
			break
		}
		if base := path.Base(h.Name); h.Typeflag != tar.TypeReg || (base != "stdout" && base != "stderr") {
			continue
		}
		b, _ := io.ReadAll(tr)
		if len(b) > 8<<10 {
			b = append([]byte("…"), b[len(b)-8<<10:]...)
		}
		fmt.Fprintf(&out, "--- %s ---\n%s\n", h.Name, b)
	}
	return out.String()
}

// waitFor polls cond until it holds or timeout passes; then the test fails
// with what, the timeout and cond's last explanation.
func (c *cluster) waitFor(timeout time.Duration, what string, cond func() (bool, string)) {
	c.t.Helper()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	deadline := time.Now().Add(timeout)
	for ; ; <-tick.C {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out after %v waiting for %s; last: %s", timeout, what, why)
		}
	}
}

func (c *cluster) rawGet(url string) ([]byte, error) {
	resp, err := c.http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(b))
	}
	return b, err
}

func (c *cluster) getJSON(url string, v any) error {
	b, err := c.rawGet(url)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	return nil
}

// masterState is the part of the master's /state (Mesos' field names) the
// tests read.
type masterState struct {
	Hostname            string         `json:"hostname"`
	UnreachableSlaves   int            `json:"unreachable_slaves"`
	Slaves              []stateAgent   `json:"slaves"`
	Frameworks          []stateFw      `json:"frameworks"`
	CompletedFrameworks []stateFw      `json:"completed_frameworks"`
	LeaderInfo          map[string]any `json:"leader_info"`
}

type stateAgent struct {
	ID       string `json:"id"`
	PID      string `json:"pid"`
	Hostname string `json:"hostname"`
	Active   bool   `json:"active"`
}

type stateFw struct {
	ID               string      `json:"id"`
	Name             string      `json:"name"`
	Tasks            []stateTask `json:"tasks"`
	UnreachableTasks []stateTask `json:"unreachable_tasks"`
	CompletedTasks   []stateTask `json:"completed_tasks"`
}

type stateTask struct {
	ID      string `json:"id"`
	SlaveID string `json:"slave_id"`
	State   string `json:"state"`
}

// agentState is the part of an agent's /state the tests read.
type agentState struct {
	ID         string `json:"id"`
	Hostname   string `json:"hostname"`
	Frameworks []struct {
		ID        string `json:"id"`
		Executors []struct {
			ID string `json:"id"`
		} `json:"executors"`
	} `json:"frameworks"`
}

func (c *cluster) masterState() (masterState, error) {
	var st masterState
	err := c.getJSON(c.master.hostURL+"/state", &st)
	return st, err
}

// waitAgents waits until the master lists n active agents, agent1…agentN,
// each advertising its network alias and port (slave(1)@agentI:5051).
func (c *cluster) waitAgents(n int) {
	c.t.Helper()
	c.waitFor(30*time.Second, fmt.Sprintf("%d agents registered with the master", n), func() (bool, string) {
		st, err := c.masterState()
		if err != nil {
			return false, err.Error()
		}
		got := map[string]stateAgent{}
		for _, a := range st.Slaves {
			if a.Active {
				got[a.Hostname] = a
			}
		}
		for _, a := range c.agents {
			s, ok := got[a.name]
			if !ok {
				return false, fmt.Sprintf("active agents %v", got)
			}
			if want := "slave(1)@" + a.name + ":" + agentPort; s.PID != want {
				c.t.Fatalf("agent %s advertises %q to the master, want %q", a.name, s.PID, want)
			}
		}
		return len(got) == n, fmt.Sprintf("active agents %v", got)
	})
}

// agentID is the id agent a registered under, from its own /state,
// waiting until it has one: the master lists an agent as soon as it
// registers it, a moment before the agent has the master's answer.
func (c *cluster) agentID(a *node) string {
	c.t.Helper()
	var id string
	c.waitFor(30*time.Second, a.name+" to know its agent id", func() (bool, string) {
		var st agentState
		if err := c.getJSON(a.hostURL+"/state", &st); err != nil {
			return false, fmt.Sprintf("%s /state: %v", a.name, err)
		}
		id = st.ID
		return id != "", a.name + "'s /state has no id yet"
	})
	return id
}

// waitNoExecutors waits until agent a runs no executor and has forgotten
// every framework: its /state lists no framework (one whose executors all
// ended is dropped, as Mesos agents do) and no process but the agent
// itself runs in its container.
func (c *cluster) waitNoExecutors(a *node) {
	c.t.Helper()
	c.waitFor(30*time.Second, a.name+" to run no executor and keep no framework", func() (bool, string) {
		var st agentState
		if err := c.getJSON(a.hostURL+"/state", &st); err != nil {
			return false, err.Error()
		}
		for _, fw := range st.Frameworks {
			if len(fw.Executors) > 0 {
				return false, fmt.Sprintf("framework %s still has executors %v in /state", fw.ID, fw.Executors)
			}
		}
		if len(st.Frameworks) > 0 {
			return false, fmt.Sprintf("/state still lists frameworks %+v", st.Frameworks)
		}
		cmds, err := c.processes(a)
		if err != nil {
			return false, err.Error()
		}
		if !onlyAgent(cmds) {
			return false, fmt.Sprintf("processes in the container: %q", cmds)
		}
		return true, ""
	})
}

// driver is a driver container running `flint submit`.
type driver struct {
	c *cluster
	n *node
}

// submit starts a driver container (host name and alias name) on the
// network running `flint submit args...` against the cluster's master.
func (c *cluster) submit(name string, args ...string) *driver {
	c.t.Helper()
	// Debug level: the suite reads what the driver did (executors launched and
	// registered, the binary URL it advertised) from lines that a user's
	// default output leaves out.
	args = append([]string{"submit", "--master", "mesos://master:" + masterPort, "--log-level", "debug"}, args...)
	return &driver{c: c, n: c.start(name, "", args...)}
}

// wait waits for the driver to exit and returns its status and output.
func (d *driver) wait(timeout time.Duration) (code int, stdout, stderr string) {
	d.c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	code, err := d.c.pool.Client.WaitContainerWithContext(d.n.id, ctx)
	if err != nil {
		d.c.t.Fatalf("waiting for the driver to exit (timeout %v): %v", timeout, err)
	}
	stdout, stderr = d.c.logs(d.n)
	return code, stdout, stderr
}

// waitLog waits until the driver's stderr matches re and returns all its
// matches so far.
func (d *driver) waitLog(timeout time.Duration, what string, re *regexp.Regexp, n int) [][]string {
	d.c.t.Helper()
	var m [][]string
	d.c.waitFor(timeout, what, func() (bool, string) {
		_, e := d.c.logs(d.n)
		m = re.FindAllStringSubmatch(e, -1)
		if len(m) < n {
			d.failIfExited()
		}
		return len(m) >= n, fmt.Sprintf("%d of %d lines matching %s", len(m), n, re)
	})
	return m
}

// dockerKill is `docker kill` (SIGKILL) of container id.
func dockerKill(id string) dc.KillContainerOptions {
	return dc.KillContainerOptions{ID: id, Signal: dc.SIGKILL}
}

// failIfExited fails the test when the driver has already exited: called
// while waiting for something the running driver should do.
func (d *driver) failIfExited() {
	d.c.t.Helper()
	info, err := d.c.pool.Client.InspectContainer(d.n.id)
	if err == nil && !info.State.Running && !info.State.FinishedAt.IsZero() {
		d.c.t.Fatalf("%s exited early, with status %d", d.n.name, info.State.ExitCode)
	}
}

// removeOthers removes the containers left on the cluster network that
// the test did not start itself: executors the agents started as sibling
// containers (the Docker containerizer) outlive a removed agent.
func (c *cluster) removeOthers() {
	left, err := c.pool.Client.ListContainers(dc.ListContainersOptions{All: true,
		Filters: map[string][]string{"network": {c.net.Network.Name}}})
	if err != nil {
		c.t.Logf("list containers on %s: %v", c.net.Network.Name, err)
		return
	}
	for _, ctr := range left {
		if err := c.pool.Client.RemoveContainer(dc.RemoveContainerOptions{ID: ctr.ID, Force: true, RemoveVolumes: true}); err != nil {
			c.t.Logf("remove container %v: %v", ctr.Names, err)
		}
	}
}

// hostSandboxLogs is sandboxLogs of a work dir on the host.
func hostSandboxLogs(workDir string) string {
	var out strings.Builder
	err := filepath.WalkDir(filepath.Join(workDir, "slaves"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (d.Name() != "stdout" && d.Name() != "stderr") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if len(b) > 8<<10 {
			b = append([]byte("…"), b[len(b)-8<<10:]...)
		}
		fmt.Fprintf(&out, "--- %s ---\n%s\n", p, b)
		return nil
	})
	if err != nil {
		fmt.Fprintf(&out, "(reading %s/slaves: %v)\n", workDir, err)
	}
	return out.String()
}
