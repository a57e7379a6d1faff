package e2e

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/internal/testkit/burstcheck"
)

// siblingPorts is the first of the ports agent i offers ([siblingPorts +
// 10(i-1), +9]): the agents' executor containers publish them on the one
// Docker host they share, so each agent has its own range, as agents on
// one host would (Docker refuses a host port twice: "port is already
// allocated"). Outside the ephemeral range and the ranges of
// deploy/minimesos/dockerjob's tests.
const siblingPorts = 31700

// newDockerCluster starts a master and n agents whose executors run as
// sibling containers: each agent has the Docker containerizer
// (--containerizers docker,mesos) and the host's Docker socket, offers
// ports [siblingPorts+10(i-1), +9], and its work dir is a directory of
// the Docker host mounted at the same path in its container — the
// sandboxes the agent creates there are the host paths the Docker daemon
// bind-mounts into the executors' containers. So is a directory for its
// shuffle service (node.shuffleDir), which executors mount as a volume.
func newDockerCluster(t *testing.T, agents int) *cluster {
	t.Helper()
	c := newNetwork(t)
	sock := dockerSocket(t, c)
	tmp := t.TempDir()
	c.master = c.start("master", masterPort, masterFlags...)
	for i := 1; i <= agents; i++ {
		name := fmt.Sprintf("agent%d", i)
		dir, svc := filepath.Join(tmp, name), filepath.Join(tmp, name+"-shuffle")
		for _, d := range []string{dir, svc} {
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		lo := siblingPorts + 10*(i-1)
		a := c.startAgent(name, dir, []string{sock + ":/var/run/docker.sock", dir + ":" + dir, svc + ":" + svc},
			"--containerizers", "docker,mesos", "--resources", fmt.Sprintf("%s;ports:[%d-%d]", agentResources, lo, lo+9))
		a.shuffleDir = svc
	}
	c.waitAgents(agents)
	return c
}

// dockerSocket is the path of the Docker daemon's socket on the host,
// which agents mount at /var/run/docker.sock.
func dockerSocket(t *testing.T, c *cluster) string {
	t.Helper()
	ep := c.pool.Client.Endpoint()
	sock, ok := strings.CutPrefix(ep, "unix://")
	if !ok {
		t.Fatalf("agents reach Docker through its socket mounted in their containers; the daemon is at %s, not a unix socket", ep)
	}
	return sock
}

// TestCoarseExecutorsInSiblingContainers runs coarse executors in the
// suite's scratch image as Docker containers the agents start beside
// themselves through the host's Docker socket (agents in containers on
// the e2e network, as Mesos agents run in Docker with the socket
// mounted): flint.mesos.executor.docker.image (the image without an
// ENTRYPOINT, the binary in it: flint.mesos.executor.home=/), on the e2e
// network (flint.mesos.network.name: Docker USER networking) with the
// shuffle server's port taken from the agent's offered ports and mapped.
// The burst driver (no dynamic allocation) holds its 8 map tasks until an
// executor registered from each agent, so map outputs are on both; each
// of the 4 reducers reads every map output, so it fetches from the
// other executor's container. The sums of both actions equal plain Go's,
// the map stage ran its 8 tasks once on both executors, nothing failed.
// Each executor's log (in its sandbox, a host path) says it served its
// outputs at its own container's address on the e2e network — neither
// an agent's nor the driver's — and at a port of its agent's range.
func TestCoarseExecutorsInSiblingContainers(t *testing.T) {
	c := newDockerCluster(t, 2)
	image := executorImage(t)
	d := &driver{c: c, n: c.startProgram("driver", "", []string{"/burst"},
		"--master", "mesos://master:"+masterPort, "--log-level", "debug",
		"--conf", "flint.executor.cores=2", "--conf", "flint.executor.memory=512m",
		"--conf", "flint.mesos.executor.docker.image="+image, "--conf", "flint.mesos.executor.home=/",
		"--conf", "flint.mesos.network.name="+c.net.Network.Name,
		"--conf", "flint.mesos.executor.docker.parameters=label=flint-e2e="+runID,
		"--", "--executors", "2", "--gate-host", "driver", "--n", "20000", "--wait-release=false")}
	code, stdout, stderr := d.wait(driverTimeout)
	if code != 0 {
		t.Fatalf("the driver exited with status %d, want 0; stdout:\n%s", code, stdout)
	}
	r, err := burstcheck.Parse(stdout)
	if err != nil {
		t.Fatal(err)
	}
	burstcheck.CheckSums(t, r, 20000)
	hosts := map[string]bool{}
	for _, id := range r.AddedFirst {
		hosts[r.Hosts[id]] = true
	}
	if len(r.AddedFirst) != 2 || !hosts["agent1"] || !hosts["agent2"] {
		t.Errorf("executors %v on hosts %v, want one on each agent", r.AddedFirst, r.Hosts)
	}
	if len(r.AddedSecond) != 0 || len(r.Removed) != 0 {
		t.Errorf("executors added %v and removed %v during the second action, want none", r.AddedSecond, r.Removed)
	}
	if r.MapTasks != burstcheck.MapTasks || len(r.MapExecutors) != 2 {
		t.Errorf("the map stage ended %d tasks on executors %v, want its 8, once, on both", r.MapTasks, r.MapExecutors)
	}
	if len(r.Failures) > 0 || strings.Contains(stderr, "FetchFailed") {
		t.Errorf("failures (none expected):\n%s\ndriver log:\n%s", strings.Join(r.Failures, "\n"), stderr)
	}
	if n := c.checkSiblingAddresses(shuffleServedAt); n["agent1"] != 1 || n["agent2"] != 1 {
		t.Errorf("executor sandboxes per agent %v, want one on each", n)
	}
	for _, a := range c.agents {
		c.waitNoExecutors(a)
	}
}

// Where an executor logs that it serves (the advertised host and port):
// its shuffle server (coarse and fine) and fine's result server.
var (
	shuffleServedAt = regexp.MustCompile(`serving shuffle outputs[^\n]*?https?://([^/:"]+):(\d+)/`)
	resultsServedAt = regexp.MustCompile(`results served at https?://([^/:"]+):(\d+)`)
)

// checkSiblingAddresses checks the executors' own logs (stderr in their
// sandboxes under each agent's work dir, a host path): in each, every
// line of served names an address on the cluster network that is no
// node's (master, agents, driver: their own containers'), with a port of
// its agent's range. It returns how many executors each agent ran.
func (c *cluster) checkSiblingAddresses(served ...*regexp.Regexp) map[string]int {
	c.t.Helper()
	info, err := c.pool.Client.NetworkInfo(c.net.Network.ID)
	if err != nil || len(info.IPAM.Config) == 0 {
		c.t.Fatalf("the cluster network's subnet: %v (%+v)", err, info)
	}
	_, subnet, err := net.ParseCIDR(info.IPAM.Config[0].Subnet)
	if err != nil {
		c.t.Fatalf("the cluster network's subnet: %v", err)
	}
	nodeIPs := map[string]string{}
	for _, n := range c.nodes {
		nodeIPs[n.ip] = n.name
	}
	executors := map[string]int{}
	for i, a := range c.agents {
		lo := siblingPorts + 10*i
		err := filepath.WalkDir(filepath.Join(a.workDir, "slaves"), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != "stderr" || !strings.Contains(p, "/executors/") {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			executors[a.name]++
			for _, re := range served {
				m := re.FindStringSubmatch(string(b))
				if m == nil {
					c.t.Errorf("%s: no line matching %s in %s:\n%s", a.name, re, p, b)
					continue
				}
				c.t.Logf("%s's executor (%s): %s", a.name, filepath.Base(filepath.Dir(filepath.Dir(filepath.Dir(p)))), m[0])
				ip, port := net.ParseIP(m[1]), m[2]
				p0, _ := strconv.Atoi(port)
				switch {
				case ip == nil || !subnet.Contains(ip):
					c.t.Errorf("%s's executor serves at %s:%s, want an address on the cluster network %s", a.name, m[1], port, subnet)
				case nodeIPs[m[1]] != "":
					c.t.Errorf("%s's executor serves at %s:%s, %s's address: want its own container's", a.name, m[1], port, nodeIPs[m[1]])
				case p0 < lo || p0 > lo+9:
					c.t.Errorf("%s's executor serves on port %d, want one of its offered [%d-%d]", a.name, p0, lo, lo+9)
				}
			}
			return nil
		})
		if err != nil {
			c.t.Errorf("%s's sandboxes: %v", a.name, err)
		}
	}
	return executors
}

// TestFineExecutorsInSiblingContainers is the same cluster in fine mode:
// the wordcount example (its bundled text, 8 map and 4 reduce partitions)
// with its executors in sibling containers on the e2e network, each
// taking two of its agent's offered ports (result server, shuffle
// server). An agent runs one task at a time (2 cpus: the executor's 0.1
// and a task's 1), so map outputs land on both agents' containers and
// reducers read the other container's through its shuffle server; with
// flint.task.maxDirectResultSize=1 the driver fetches every result from
// an executor's result server. The printed counts equal the test's own
// count; the event log shows map outputs on both agents and remote
// shuffle reads; each executor's log says it served both at its own
// container's address on the network, with ports of its agent's range.
func TestFineExecutorsInSiblingContainers(t *testing.T) {
	want := expectedWordCount(t)
	c := newDockerCluster(t, 2)
	image := executorImage(t)
	d := c.submit("driver", "--conf", "flint.mesos.coarse=false", "--conf", "flint.default.parallelism=8",
		"--conf", "flint.task.maxDirectResultSize=1",
		"--conf", "flint.eventLog.enabled=true", "--conf", "flint.eventLog.dir="+eventDir,
		"--conf", "flint.mesos.executor.docker.image="+image, "--conf", "flint.mesos.executor.home=/",
		"--conf", "flint.mesos.network.name="+c.net.Network.Name,
		"--conf", "flint.mesos.executor.docker.parameters=label=flint-e2e="+runID,
		"--example", "wordcount", "--", "--top", "100000", "--partitions", "4")
	code, stdout, stderr := d.wait(driverTimeout)
	if code != 0 {
		t.Fatalf("the driver exited with status %d, want 0; stdout:\n%s", code, stdout)
	}
	if stdout != want {
		t.Fatalf("the driver printed\n%s\nwant (counted in the test)\n%s", head(stdout), head(want))
	}
	mapHosts, remote := map[string]bool{}, int64(0)
	for _, tk := range c.shuffleTasks(d) {
		if tk.end.ShuffleWriteBytes > 0 {
			mapHosts[tk.host] = true
		}
		remote += tk.end.ShuffleRead.RemoteBytes
	}
	if !mapHosts["agent1"] || !mapHosts["agent2"] || remote == 0 {
		t.Errorf("map outputs on %v, %d bytes read remotely; want outputs on both agents, read remotely", mapHosts, remote)
	}
	if strings.Contains(stderr, "FetchFailed") || strings.Contains(stderr, " lost: ") {
		t.Errorf("want no fetch failure and no executor lost:\n%s", stderr)
	}
	if n := c.checkSiblingAddresses(shuffleServedAt, resultsServedAt); n["agent1"] == 0 || n["agent2"] == 0 {
		t.Errorf("executor sandboxes per agent %v, want some on each", n)
	}
	for _, a := range c.agents {
		c.waitNoExecutors(a)
	}
}

// TestDynamicAllocationInSiblingContainers is dynamic allocation with
// executors in sibling containers: one agent of the Docker cluster, its
// `flint shuffle-service` beside it (in its container) keeping the
// executors' files in a host directory mounted at the same path in the
// agent's container and, as a volume
// (flint.mesos.executor.docker.volumes), in every executor's. The burst
// driver (maxExecutors 2 of 1 core, executorIdleTimeout 2s) ramps up to
// 2 executors before its map tasks proceed, waits until both were
// released for idleness, then reads the same shuffle again on new
// executors from the service. Both actions' sums equal plain Go's, the
// map stage ran its 8 tasks once, nothing failed.
func TestDynamicAllocationInSiblingContainers(t *testing.T) {
	c := newDockerCluster(t, 1)
	a := c.agents[0]
	c.startShuffleService(a, a.shuffleDir)
	image := executorImage(t)
	d := &driver{c: c, n: c.startProgram("driver", "", []string{"/burst"},
		"--master", "mesos://master:"+masterPort, "--log-level", "debug",
		"--conf", "flint.executor.cores=1", "--conf", "flint.executor.memory=256m",
		"--conf", "flint.mesos.executor.docker.image="+image, "--conf", "flint.mesos.executor.home=/",
		"--conf", "flint.mesos.network.name="+c.net.Network.Name,
		"--conf", "flint.mesos.executor.docker.parameters=label=flint-e2e="+runID,
		"--conf", "flint.mesos.executor.docker.volumes="+a.shuffleDir+":"+a.shuffleDir,
		"--conf", "flint.shuffle.service.enabled=true", "--conf", "flint.shuffle.service.dir="+a.shuffleDir,
		"--conf", "flint.dynamicAllocation.enabled=true", "--conf", "flint.dynamicAllocation.maxExecutors=2",
		"--conf", "flint.dynamicAllocation.executorIdleTimeout=2s",
		"--", "--executors", "2", "--gate-host", "driver", "--n", "20000")}
	code, stdout, stderr := d.wait(driverTimeout)
	if code != 0 {
		t.Fatalf("the driver exited with status %d, want 0; stdout:\n%s", code, stdout)
	}
	r, err := burstcheck.Parse(stdout)
	if err != nil {
		t.Fatal(err)
	}
	burstcheck.CheckSums(t, r, 20000)
	burstcheck.CheckReleased(t, r, 2)
	if strings.Contains(stderr, "FetchFailed") {
		t.Errorf("the driver logged a fetch failure:\n%s", stderr)
	}
	// One sandbox per executor that registered, at least: the backend may
	// also have launched one that the job's end made unnecessary before
	// it registered.
	if n := c.checkSiblingAddresses(); n[a.name] < len(r.AddedFirst)+len(r.AddedSecond) {
		t.Errorf("%d executor sandboxes on %s, want one per executor (%d) at least", n[a.name], a.name, len(r.AddedFirst)+len(r.AddedSecond))
	}
	c.waitNoExecutors(a)
}
