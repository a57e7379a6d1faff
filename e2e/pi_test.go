package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var (
	// frameworkLine names the framework id the driver registered as.
	frameworkLine = regexp.MustCompile(`subscribed as framework (\S+) to master`)
	// binaryLine is the executor binary URL on the driver's file server
	// that the driver hands to the agents, with the host it advertises.
	binaryLine = regexp.MustCompile(`binary http://([^:/"]+):\d+/files/`)
	// registeredLine: a coarse executor connected back to the driver's
	// gateway, from the address the driver saw.
	registeredLine = regexp.MustCompile(`coarse: executor (\d+) registered from ([0-9.]+):\d+`)
)

const driverTimeout = 2 * time.Minute

func TestCoarsePiAcrossHosts(t *testing.T) { testPiAcrossHosts(t, true) }

func TestFinePiAcrossHosts(t *testing.T) { testPiAcrossHosts(t, false) }

// testPiAcrossHosts runs the pi example from driver containers against a
// master and two agents in their own containers, twice: with the default
// settings, then with flint.task.maxDirectResultSize=1 so that every result
// stays on its executor and the driver fetches it (fine: from the
// executor's result server on its agent's address; coarse: over the
// gateway stream). Each time, executors must run on both agents, fetch the
// driver's binary from the driver's address on the network, and be gone
// once the framework is torn down.
func testPiAcrossHosts(t *testing.T, coarse bool) {
	c := newCluster(t, 2)
	for _, run := range []struct{ name, conf string }{
		{"driver", ""},
		{"driver-indirect", "flint.task.maxDirectResultSize=1"},
	} {
		args := []string{"--example", "pi"}
		if !coarse {
			args = append(args, "--conf", "flint.mesos.coarse=false")
		}
		if run.conf != "" {
			args = append(args, "--conf", run.conf)
		}
		d := c.submit(run.name, args...)
		code, stdout, stderr := d.wait(driverTimeout)
		if code != 0 {
			t.Fatalf("%s (%q) exited with status %d, want 0; stdout:\n%s", run.name, args, code, stdout)
		}
		if want := regexp.MustCompile(`(?m)^Pi is roughly 3\.1\d* \(100 slices`); !want.MatchString(stdout) {
			t.Fatalf("%s's stdout does not match %s:\n%s", run.name, want, stdout)
		}
		d.checkAdvertised(stderr)
		if coarse {
			c.checkExecutorsFrom(registeredLine.FindAllStringSubmatch(stderr, -1), c.agents)
		}
		fw := frameworkID(t, stderr)
		wantTasks := 100 // fine: one Mesos task per Flint task
		if coarse {
			wantTasks = 2 // coarse: one Mesos task (the executor) per agent
		}
		c.checkFrameworkDone(fw, wantTasks, c.agents)
		for _, a := range c.agents {
			c.waitNoExecutors(a)
		}
	}
}

// TestAgentKilledMidJob kills one of two agents (docker kill: the agent and
// its executor die with their container) while a coarse-mode job runs on
// both; the job must finish correctly on the other agent, and the master
// must remove the lost agent.
func TestAgentKilledMidJob(t *testing.T) {
	c := newCluster(t, 2)
	victim, survivor := c.agents[1], c.agents[0]
	victimID := c.agentID(victim)
	// 200 tasks of 20M samples: about 10s on two cores, several seconds
	// on the surviving agent's two slots after the kill.
	d := c.submit("driver", "--example", "pi", "200", "20000000")
	regs := d.waitLog(time.Minute, "an executor registered from each agent", registeredLine, 2)
	exec := c.checkExecutorsFrom(regs, c.agents)[victim.name]
	start := time.Now()
	if err := c.pool.Client.KillContainer(dockerKill(victim.id)); err != nil {
		t.Fatalf("docker kill %s: %v", victim.cname, err)
	}
	t.Logf("killed %s (agent %s, executor %s)", victim.name, victimID, exec)
	code, stdout, stderr := d.wait(driverTimeout)
	t.Logf("the job ended %v after the kill", time.Since(start).Round(time.Millisecond))
	if code != 0 {
		t.Fatalf("the driver exited with status %d, want 0; stdout:\n%s", code, stdout)
	}
	if want := regexp.MustCompile(`(?m)^Pi is roughly 3\.14\d* \(200 slices`); !want.MatchString(stdout) {
		t.Fatalf("the driver's stdout does not match %s:\n%s", want, stdout)
	}
	lost := regexp.MustCompile(`executor ` + exec + ` lost: ([^"]*)`).FindStringSubmatchIndex(stderr)
	if lost == nil {
		t.Fatalf("the driver's log never says executor %s (on the killed %s) was lost", exec, victim.name)
	}
	finished := strings.Index(stderr, "job 0 (pi) finished")
	if finished < 0 || finished < lost[0] {
		t.Fatalf("the job finished before the driver noticed executor %s was lost: the kill did not happen mid-job", exec)
	}
	t.Logf("driver: executor %s lost: %s; %d task(s) lost with it; agent-lost event seen: %v",
		exec, stderr[lost[2]:lost[3]], strings.Count(stderr, "executor "+exec+" lost: ")-1,
		strings.Contains(stderr, "agent "+victimID+" lost"))
	c.waitFor(30*time.Second, "the master to remove the killed "+victim.name, func() (bool, string) {
		st, err := c.masterState()
		if err != nil {
			return false, err.Error()
		}
		for _, a := range st.Slaves {
			if a.ID == victimID && a.Active {
				return false, fmt.Sprintf("%s still active: %+v", victim.name, a)
			}
		}
		return true, ""
	})
	fw := frameworkID(t, stderr)
	st := c.checkFrameworkDone(fw, -1, []*node{survivor})
	for _, ft := range st.CompletedTasks {
		if ft.SlaveID == victimID && ft.State == "TASK_FINISHED" {
			t.Errorf("the executor task on the killed agent ended %s, want a lost state", ft.State)
		}
	}
	c.waitNoExecutors(survivor)
}

func frameworkID(t *testing.T, stderr string) string {
	t.Helper()
	m := frameworkLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("the driver's log does not match %s", frameworkLine)
	}
	return m[1]
}

// checkAdvertised checks that the driver handed the agents its binary's URL
// on the driver container's own network address.
func (d *driver) checkAdvertised(stderr string) {
	t := d.c.t
	t.Helper()
	m := binaryLine.FindAllStringSubmatch(stderr, -1)
	if len(m) == 0 {
		t.Fatalf("the driver's log does not match %s", binaryLine)
	}
	for _, u := range m {
		if d.n.ip == "" || u[1] != d.n.ip {
			t.Fatalf("the driver serves the executor binary on host %q, want its address on the network %q: %s",
				u[1], d.n.ip, u[0])
		}
	}
}

// checkExecutorsFrom checks that coarse executors registered with the
// driver's gateway from each agent's address (one each) and returns the
// executor id per agent name.
func (c *cluster) checkExecutorsFrom(regs [][]string, agents []*node) map[string]string {
	c.t.Helper()
	byIP := map[string]string{}
	for _, a := range agents {
		byIP[a.ip] = a.name
	}
	out := map[string]string{}
	for _, r := range regs {
		name, ok := byIP[r[2]]
		if !ok {
			c.t.Fatalf("executor %s registered from %s, not an agent's address (%v)", r[1], r[2], byIP)
		}
		out[name] = r[1]
	}
	if len(out) != len(agents) {
		c.t.Fatalf("executors registered from %v, want one from each of %v", out, byIP)
	}
	return out
}

// checkFrameworkDone waits until the master lists framework fw as
// completed and checks its tasks: wantTasks of them (unless negative), all
// terminal, with TASK_FINISHED ones on each of agents.
func (c *cluster) checkFrameworkDone(fw string, wantTasks int, agents []*node) stateFw {
	c.t.Helper()
	var done stateFw
	c.waitFor(30*time.Second, "framework "+fw+" to be completed on the master", func() (bool, string) {
		st, err := c.masterState()
		if err != nil {
			return false, err.Error()
		}
		for _, f := range st.Frameworks {
			if f.ID == fw {
				return false, fmt.Sprintf("still active with %d tasks", len(f.Tasks))
			}
		}
		for _, f := range st.CompletedFrameworks {
			if f.ID == fw {
				done = f
				return true, ""
			}
		}
		return false, "not in completed_frameworks"
	})
	if len(done.Tasks) != 0 {
		c.t.Fatalf("completed framework %s still has live tasks %+v", fw, done.Tasks)
	}
	if wantTasks >= 0 && len(done.CompletedTasks) != wantTasks {
		c.t.Fatalf("framework %s completed %d Mesos tasks, want %d", fw, len(done.CompletedTasks), wantTasks)
	}
	var on []string
	for _, ft := range done.CompletedTasks {
		if ft.State == "TASK_FINISHED" && !slices.Contains(on, ft.SlaveID) {
			on = append(on, ft.SlaveID)
		}
	}
	for _, a := range agents {
		if id := c.agentID(a); !slices.Contains(on, id) {
			c.t.Fatalf("no task of framework %s finished on %s (agent %s); finished on %v", fw, a.name, id, on)
		}
	}
	return done
}

// TestDriverKilledMidJob kills the driver container (coarse, then fine
// mode) while its executors run on both agents: with failover timeout 0 the
// master must remove the framework at once and the agents must end its
// executors, so that a crashed driver leaves nothing running on the cluster.
func TestDriverKilledMidJob(t *testing.T) {
	c := newCluster(t, 2)
	for _, coarse := range []bool{true, false} {
		// failoverTimeout 0: the master removes the framework as soon as the
		// driver's connection drops (the default keeps it 120 s).
		name, args := "driver-coarse", []string{"--conf", "flint.mesos.failoverTimeout=0", "--example", "pi", "200", "20000000"}
		if !coarse { // flags before the example: what follows it is the job's
			name, args = "driver-fine", append([]string{"--conf", "flint.mesos.coarse=false"}, args...)
		}
		d := c.submit(name, args...)
		fw := d.waitLog(time.Minute, name+" registered as a framework", frameworkLine, 1)[0][1]
		for _, a := range c.agents {
			c.waitFor(time.Minute, "an executor of "+name+" on "+a.name, func() (bool, string) {
				d.failIfExited()
				var st agentState
				if err := c.getJSON(a.hostURL+"/state", &st); err != nil {
					return false, err.Error()
				}
				for _, f := range st.Frameworks {
					if f.ID == fw && len(f.Executors) > 0 {
						return true, ""
					}
				}
				return false, fmt.Sprintf("frameworks %+v", st.Frameworks)
			})
		}
		if err := c.pool.Client.KillContainer(dockerKill(d.n.id)); err != nil {
			t.Fatalf("docker kill %s: %v", d.n.cname, err)
		}
		c.checkFrameworkDone(fw, -1, nil)
		for _, a := range c.agents {
			c.waitNoExecutors(a)
		}
	}
}
