package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMasterPartitionedFromDriverLong is TestMasterPartitionedFromDriver
// with a longer partition: the driver is cut off until its first attempt
// to subscribe again, made while partitioned, has failed (about 15s:
// flint's CallTimeout), which is still well within the failover timeout
// (60s). The driver must re-subscribe as the same framework once the
// partition heals and the job finish correctly, with no executor left.
//
// This caught a real bug: the SUBSCRIBE made during the partition went out
// on a stalled pooled keep-alive connection; it timed out in the driver but
// TCP still delivered it after the partition healed, after the driver's
// next SUBSCRIBE had succeeded, so the master failed the framework over to
// that stale request and the driver gave up on "Framework failed over".
// mesosconn now closes idle connections after a lost session and dials
// with SO_LINGER 0.
func TestMasterPartitionedFromDriverLong(t *testing.T) {
	c := newClusterWith(t, 2, "--heartbeat-interval", "250ms")
	d := c.submit("driver", "--conf", "flint.mesos.failoverTimeout=60s", "--example", "pi", "200", "20000000")
	regs := d.waitLog(time.Minute, "an executor registered from each agent", registeredLine, 2)
	c.checkExecutorsFrom(regs, c.agents)
	fw := frameworkID(t, d.stderr())
	start := time.Now()
	c.disconnect(d.n)
	// The first line: the stream went silent; the second: the SUBSCRIBE
	// made while partitioned failed.
	d.waitLog(40*time.Second, "the partitioned driver to drop its subscription and fail to subscribe again", subscriptionLost, 2)
	if oldIP := c.reconnect(d.n); d.n.ip != oldIP {
		t.Fatalf("Docker gave the driver a new address when it rejoined the network (%s, was %s)", d.n.ip, oldIP)
	}
	t.Logf("the partition lasted %v", time.Since(start).Round(time.Millisecond))
	re := d.waitLog(time.Minute, "the driver to re-register with the master", reregisteredLine, 1)
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
	c.checkFrameworkDone(fw, -1, c.agents)
	for _, a := range c.agents {
		c.waitNoExecutors(a)
	}
}
