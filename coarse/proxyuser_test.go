package coarse_test

import (
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
	"github.com/flint-mesos/flint/internal/testkit/proxyusercheck"
)

// flint.proxyUser (the scenario: internal/testkit/proxyusercheck).
func TestProxyUser(t *testing.T) {
	u := proxyusercheck.NewUsers(t)
	c := startCluster(t, clusterOpts{workDir: mesostest.SharedWorkDir(t), master: u.Master})
	proxyusercheck.Run(t, u, c.URL()+"/state", func(t *testing.T, conf ...string) *framework.Context {
		return mustRun(t, mesosURL(c), conf...).fc
	})
}

// Without a principal there is nothing the master could authorize: refused
// before anything starts.
func TestProxyUserNeedsAPrincipal(t *testing.T) {
	c := startCluster(t, clusterOpts{agents: 1})
	_, err := newRun(t, mesosURL(c), "flint.proxyUser=someone")
	if err == nil || !strings.Contains(err.Error(), "needs flint.mesos.principal") {
		t.Fatalf("proxy user without a principal: %v", err)
	}
}
