package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAgentPartitionedMidJob partitions one of two agents (docker network
// disconnect: the agent's link to the master and its executor's stream to
// the driver stall) while a coarse-mode job runs on both, with a short
// flint.network.timeout. The job must finish correctly on the other agent,
// the master must mark the partitioned agent unreachable, and the executor
// cut off from its driver must give up on its own while still partitioned;
// once the partition heals, the agent re-registers under its id and keeps
// nothing of the finished framework.
func TestAgentPartitionedMidJob(t *testing.T) {
	c := newCluster(t, 2)
	victim, survivor := c.agents[1], c.agents[0]
	victimID := c.agentID(victim)
	// 100 tasks of 20M samples: several seconds on the surviving agent
	// after the partition; the executor cut off gives up 5s after it
	// notices its stream is dead.
	d := c.submit("driver", "--conf", "flint.network.timeout=5s", "--conf", "flint.executor.heartbeatInterval=1s",
		"--example", "pi", "100", "20000000")
	regs := d.waitLog(time.Minute, "an executor registered from each agent", registeredLine, 2)
	exec := c.checkExecutorsFrom(regs, c.agents)[victim.name]
	fw := frameworkID(t, d.stderr())
	c.waitFor(10*time.Second, "the executor process on "+victim.name, func() (bool, string) {
		cmds, err := c.processes(victim)
		return err == nil && !onlyAgent(cmds), fmt.Sprintf("processes %q (%v)", cmds, err)
	})
	start := time.Now()
	c.disconnect(victim)
	c.waitUnreachable(victimID, victim.name)
	t.Logf("the master marked %s unreachable %v after the partition", victim.name, time.Since(start).Round(time.Millisecond))

	code, stdout, stderr := d.wait(driverTimeout)
	t.Logf("the job ended %v after the partition", time.Since(start).Round(time.Millisecond))
	checkPi(t, code, stdout, 100)
	checkLostMidJob(t, stderr, exec, victim.name)
	// As Mesos does, the master keeps the executor task of the unreachable
	// agent as TASK_UNREACHABLE (the framework, not partition-aware, was
	// told TASK_LOST).
	done := c.checkFrameworkDone(fw, -1, []*node{survivor})
	var unreachable []stateTask
	for _, ft := range append(done.CompletedTasks, done.UnreachableTasks...) {
		if ft.SlaveID == victimID {
			unreachable = append(unreachable, ft)
		}
	}
	if len(unreachable) != 1 || unreachable[0].State != "TASK_UNREACHABLE" || !slices.Contains(done.UnreachableTasks, unreachable[0]) {
		t.Errorf("tasks of framework %s on the partitioned agent: %+v, want its executor task among unreachable_tasks as TASK_UNREACHABLE",
			fw, unreachable)
	}
	c.waitNoExecutors(survivor)

	// Still partitioned: the executor hears nothing from its driver, sees
	// its stream fail and gives up flint.network.timeout later.
	c.waitFor(time.Minute, "the executor on the partitioned "+victim.name+" to exit on its own", func() (bool, string) {
		cmds, err := c.processes(victim)
		return err == nil && onlyAgent(cmds), fmt.Sprintf("processes %q (%v)", cmds, err)
	})
	t.Logf("the partitioned executor exited %v after the partition", time.Since(start).Round(time.Millisecond))
	if logs := c.sandboxLogs(victim); !strings.Contains(logs, "driver unreachable") {
		t.Errorf("the partitioned executor's log does not say it gave up on an unreachable driver:\n%s", logs)
	}

	c.reconnect(victim)
	c.waitRejoined(victimID, victim.name)
	t.Logf("%s re-registered %v after the partition", victim.name, time.Since(start).Round(time.Millisecond))
	c.checkNotResurrected(fw)
	c.waitNoExecutors(victim)
}

// TestAgentPartitionedHealsAfterJob partitions one of two agents while a
// coarse-mode job runs on both, as TestAgentPartitionedMidJob does, but
// with the default flint.network.timeout (120s): the executor cut off from
// its driver is still running when the job has finished and the framework
// is gone. When the partition heals, the agent re-registers with the
// removed framework's executor and the master must shut that framework
// down there (as Mesos does for a completed framework on re-registration),
// so that no orphan executor is left.
func TestAgentPartitionedHealsAfterJob(t *testing.T) {
	c := newCluster(t, 2)
	victim, survivor := c.agents[1], c.agents[0]
	victimID := c.agentID(victim)
	d := c.submit("driver", "--example", "pi", "100", "20000000")
	regs := d.waitLog(time.Minute, "an executor registered from each agent", registeredLine, 2)
	exec := c.checkExecutorsFrom(regs, c.agents)[victim.name]
	fw := frameworkID(t, d.stderr())
	c.waitFor(10*time.Second, "the executor process on "+victim.name, func() (bool, string) {
		cmds, err := c.processes(victim)
		return err == nil && !onlyAgent(cmds), fmt.Sprintf("processes %q (%v)", cmds, err)
	})
	start := time.Now()
	c.disconnect(victim)
	c.waitUnreachable(victimID, victim.name)
	code, stdout, stderr := d.wait(driverTimeout)
	t.Logf("the job ended %v after the partition", time.Since(start).Round(time.Millisecond))
	checkPi(t, code, stdout, 100)
	checkLostMidJob(t, stderr, exec, victim.name)
	c.checkFrameworkDone(fw, -1, []*node{survivor})
	c.waitNoExecutors(survivor)
	if cmds, err := c.processes(victim); err != nil || onlyAgent(cmds) {
		t.Fatalf("the executor on the partitioned %s ended before the partition healed (processes %q, %v): "+
			"it should wait flint.network.timeout (120s) for its driver", victim.name, cmds, err)
	}

	c.reconnect(victim)
	c.waitRejoined(victimID, victim.name)
	t.Logf("%s re-registered %v after the partition", victim.name, time.Since(start).Round(time.Millisecond))
	c.checkNotResurrected(fw)
	c.waitNoExecutors(victim)
	t.Logf("%s runs no executor %v after the partition", victim.name, time.Since(start).Round(time.Millisecond))
	if logs := c.sandboxLogs(victim); strings.Contains(logs, "driver unreachable") {
		t.Errorf("the partitioned executor gave up on its driver (flint.network.timeout) instead of being shut down by its agent:\n%s", logs)
	}
	_, masterLog := c.logs(c.master)
	shutdown := regexp.MustCompile(`msg="agent runs a removed framework; shutting it down" agent=` +
		regexp.QuoteMeta(victimID) + ` .*framework=` + regexp.QuoteMeta(fw))
	if !shutdown.MatchString(masterLog) {
		t.Errorf("the master's log does not say it shut framework %s down on the re-registered %s", fw, victim.name)
	}
}

var (
	// subscriptionLost: the driver dropped its subscription to the master
	// (heartbeats stopped coming) and subscribes again after a delay.
	subscriptionLost = regexp.MustCompile(`mesosconn: subscription to \S+ lost; re-subscribing in (\w+)`)
	// reregisteredLine: the driver subscribed again, with its framework id.
	reregisteredLine = regexp.MustCompile(`coarse: re-registered with the Mesos master at \S+ as framework ([^\s"]+)`)
)

// TestMasterPartitionedFromDriver partitions the driver from the cluster
// (docker network disconnect of the driver's container) while a
// coarse-mode job runs on two agents, until the driver has noticed that
// the master's heartbeats stopped (the master sends one every 250ms here,
// and the driver drops a stream silent for 5 of them), then heals the
// partition, well within the framework's failover timeout (60s). The
// driver must re-subscribe as the same framework and the job finish with
// the right result; the executors (whose streams to the driver only stall,
// for less than flint.network.timeout) may carry on or be replaced, and
// none is left once the framework is torn down.
func TestMasterPartitionedFromDriver(t *testing.T) {
	partitionDriver(t, func(d *driver) {
		// Heal once the driver's first attempt to subscribe again has
		// begun, so that it is made while partitioned.
		lost := d.waitLog(30*time.Second, "the partitioned driver to drop its subscription", subscriptionLost, 1)
		retryIn, err := time.ParseDuration(lost[0][1])
		if err != nil {
			t.Fatalf("the driver's re-subscription delay %q: %v", lost[0][1], err)
		}
		time.Sleep(retryIn + time.Second) // the partition's duration, not a synchronisation
	})
}

// partitionDriver runs a coarse job on two agents, cuts the driver off
// once an executor registered from each, heals the partition when heal
// returns (well within the framework's failover timeout), and checks that
// the master kept the framework, the driver re-subscribed as the same
// framework before the job finished, the job's result is right and no
// executor is left.
func partitionDriver(t *testing.T, heal func(d *driver)) {
	t.Helper()
	c := newClusterWith(t, 2, "--heartbeat-interval", "250ms")
	// 200 tasks of 20M samples (about 10s on the two agents' four slots,
	// and no task is launched while the driver is cut off): the job
	// outlasts the partition and the re-subscription.
	d := c.submit("driver", "--conf", "flint.mesos.failoverTimeout=60s", "--example", "pi", "200", "20000000")
	regs := d.waitLog(time.Minute, "an executor registered from each agent", registeredLine, 2)
	c.checkExecutorsFrom(regs, c.agents)
	fw := frameworkID(t, d.stderr())
	start := time.Now()
	c.disconnect(d.n)
	heal(d)
	if oldIP := c.reconnect(d.n); d.n.ip != oldIP {
		t.Fatalf("Docker gave the driver a new address when it rejoined the network (%s, was %s): its executors "+
			"and the master only know the old one", d.n.ip, oldIP)
	}
	t.Logf("the partition lasted %v", time.Since(start).Round(time.Millisecond))
	st, err := c.masterState()
	if err != nil {
		t.Fatalf("master /state: %v", err)
	}
	for _, f := range st.CompletedFrameworks {
		if f.ID == fw {
			t.Fatalf("the master removed framework %s during the partition (failover timeout 60s)", fw)
		}
	}
	re := d.waitLog(time.Minute, "the driver to re-register with the master", reregisteredLine, 1)
	t.Logf("the driver re-registered %v after the partition began", time.Since(start).Round(time.Millisecond))
	if re[0][1] != fw {
		t.Fatalf("the driver re-registered as framework %s, want the same framework %s", re[0][1], fw)
	}
	code, stdout, stderr := d.wait(driverTimeout)
	t.Logf("the job ended %v after the partition began", time.Since(start).Round(time.Millisecond))
	if strings.Contains(stderr, "mesosconn: giving up") {
		t.Errorf("the driver gave up on the master after the partition healed:\n%s",
			strings.Join(regexp.MustCompile(`(?m)^.*(mesosconn|failed over).*$`).FindAllString(stderr, -1), "\n"))
	}
	checkPi(t, code, stdout, 200)
	if reAt, doneAt := strings.Index(stderr, "coarse: re-registered"), strings.Index(stderr, "job 0 (pi) finished"); doneAt < reAt {
		t.Fatalf("the job finished before the driver re-registered: the partition did not happen mid-job")
	}
	t.Logf("executors registered %d times, %d lost", len(registeredLine.FindAllString(stderr, -1)),
		len(regexp.MustCompile(`msg="executor \d+ lost: `).FindAllString(stderr, -1)))
	c.checkFrameworkDone(fw, -1, c.agents)
	for _, a := range c.agents {
		c.waitNoExecutors(a)
	}
}

// stderr is the driver's stderr so far.
func (d *driver) stderr() string {
	_, e := d.c.logs(d.n)
	return e
}

// checkPi checks that a driver running pi with slices slices exited 0 and
// printed its estimate.
func checkPi(t *testing.T, code int, stdout string, slices int) {
	t.Helper()
	if code != 0 {
		t.Fatalf("the driver exited with status %d, want 0; stdout:\n%s", code, stdout)
	}
	if want := regexp.MustCompile(fmt.Sprintf(`(?m)^Pi is roughly 3\.14\d* \(%d slices`, slices)); !want.MatchString(stdout) {
		t.Fatalf("the driver's stdout does not match %s:\n%s", want, stdout)
	}
}

// checkLostMidJob checks that the driver's log says executor exec (on
// host) was lost, before the job finished.
func checkLostMidJob(t *testing.T, stderr, exec, host string) {
	t.Helper()
	lost := regexp.MustCompile(`executor ` + exec + ` lost: ([^"]*)`).FindStringSubmatchIndex(stderr)
	if lost == nil {
		t.Fatalf("the driver's log never says executor %s (on %s) was lost", exec, host)
	}
	finished := strings.Index(stderr, "job 0 (pi) finished")
	if finished < 0 || finished < lost[0] {
		t.Fatalf("the job finished before the driver noticed executor %s was lost: the fault did not happen mid-job", exec)
	}
	t.Logf("driver: executor %s lost: %s", exec, stderr[lost[2]:lost[3]])
}

// waitUnreachable waits until the master has removed agent id (name) as
// unreachable: no longer among its agents, counted in unreachable_slaves.
func (c *cluster) waitUnreachable(id, name string) {
	c.t.Helper()
	c.waitFor(30*time.Second, "the master to mark "+name+" unreachable", func() (bool, string) {
		st, err := c.masterState()
		if err != nil {
			return false, err.Error()
		}
		for _, a := range st.Slaves {
			if a.ID == id {
				return false, fmt.Sprintf("%s still listed: %+v", name, a)
			}
		}
		return st.UnreachableSlaves == 1, fmt.Sprintf("unreachable_slaves %d", st.UnreachableSlaves)
	})
}

// waitRejoined waits until the master lists agent id (name) as active
// again, under the same id, and as unreachable no more.
func (c *cluster) waitRejoined(id, name string) {
	c.t.Helper()
	c.waitFor(30*time.Second, name+" to re-register with the master as "+id, func() (bool, string) {
		st, err := c.masterState()
		if err != nil {
			return false, err.Error()
		}
		var found []stateAgent
		for _, a := range st.Slaves {
			if a.Hostname == name {
				found = append(found, a)
			}
		}
		ok := len(found) == 1 && found[0].ID == id && found[0].Active && st.UnreachableSlaves == 0
		return ok, fmt.Sprintf("agents named %s: %+v; unreachable_slaves %d", name, found, st.UnreachableSlaves)
	})
}

// checkNotResurrected checks that the master still has framework fw as
// completed only: an agent re-registering with it must not bring it back.
func (c *cluster) checkNotResurrected(fw string) {
	c.t.Helper()
	st, err := c.masterState()
	if err != nil {
		c.t.Fatalf("master /state: %v", err)
	}
	for _, f := range st.Frameworks {
		if f.ID == fw {
			c.t.Fatalf("the master lists the finished framework %s as active again: %+v", fw, f)
		}
	}
}
