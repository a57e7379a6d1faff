// Package proxyusercheck is the flint.proxyUser scenario both Mesos modes
// run (coarse and fine TestProxyUser): one copy of the master's ACL, the
// jobs and the checks, each mode supplying its cluster and how it starts a
// context.
package proxyusercheck

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/master"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
)

const principalSecret = "proxy-principal-secret-7d2e41"

// Identity is who a task ran as.
type Identity struct {
	UID       int
	FlintUser string
}

var whoAmI = framework.Register("proxyusercheck.whoAmI", func(_ context.Context, _ int) (Identity, error) {
	return Identity{UID: os.Getuid(), FlintUser: os.Getenv("FLINT_USER")}, nil
})

// Users are two OS users the scenario creates: one the master's run_tasks
// ACL allows the framework's principal flint to run as, one it refuses.
type Users struct {
	Allowed, Refused string
	AllowedUID       int
}

// NewUsers creates the scenario's users (mesostest.OSUser).
func NewUsers(t *testing.T) Users {
	allowed, uid := mesostest.OSUser(t)
	refused, _ := mesostest.OSUser(t)
	return Users{Allowed: allowed, Refused: refused, AllowedUID: uid}
}

// Master configures the cluster's master: the principal's credentials and
// the ACL. Start the cluster on mesostest.SharedWorkDir.
func (u Users) Master(mc *master.Config) {
	mc.Credentials = map[string]string{"flint": principalSecret}
	mc.ACLs = &master.ACLs{RunTasks: []master.RunTaskACL{
		{Principals: master.ACLEntity{Values: []string{"flint"}}, Users: master.ACLEntity{Values: []string{u.Allowed}}}}}
}

// Run checks flint.proxyUser: the framework registers as the submitter
// (the master at stateURL says so) while the executors, and so the tasks,
// run as the allowed proxy user; the refused user fails the job at once,
// naming the user. start starts a context with conf on the cluster.
func Run(t *testing.T, u Users, stateURL string, start func(t *testing.T, conf ...string) *framework.Context) {
	auth := []string{"flint.mesos.principal=flint", "flint.mesos.secret=" + principalSecret, "flint.task.maxFailures=4"}
	fc := start(t, append(auth, "flint.proxyUser="+u.Allowed)...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got, err := framework.Map(ctx, fc, whoAmI, []int{0, 1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range got {
		if id != (Identity{UID: u.AllowedUID, FlintUser: u.Allowed}) {
			t.Fatalf("task %d ran as %+v, want uid %d and FLINT_USER %s", i, id, u.AllowedUID, u.Allowed)
		}
	}
	checkRegisteredAsSubmitter(t, stateURL)
	_ = fc.Stop(context.Background())

	fc = start(t, append(auth, "flint.proxyUser="+u.Refused)...)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel2()
	_, err = framework.Map(ctx2, fc, whoAmI, []int{0})
	if err == nil || ctx2.Err() != nil {
		t.Fatalf("job as a user the ACL refuses: %v, want the master's refusal (not the test's deadline)", err)
	}
	for _, want := range []string{"refused to run the executors as user \"" + u.Refused + "\"", "Not authorized to launch as user"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("job error lacks %q: %v", want, err)
		}
	}
}

func checkRegisteredAsSubmitter(t *testing.T, stateURL string) {
	t.Helper()
	var state struct {
		Frameworks []struct{ User, Principal string } `json:"frameworks"`
	}
	resp, err := http.Get(stateURL)
	if err != nil {
		t.Fatal(err)
	}
	err = json.NewDecoder(resp.Body).Decode(&state)
	resp.Body.Close()
	if err != nil || len(state.Frameworks) != 1 || state.Frameworks[0].User != mesosconn.DefaultUser() || state.Frameworks[0].Principal != "flint" {
		t.Fatalf("the framework registered as %+v (%v), want the submitter %s with principal flint", state.Frameworks, err, mesosconn.DefaultUser())
	}
}
