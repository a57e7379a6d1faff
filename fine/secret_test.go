package fine

import (
	"strings"
	"testing"

	fineexec "github.com/flint-mesos/flint/executor/fine"
)

// An executor's settings carry its own result-server secret, derived from
// the application secret, never the application secret itself.
func TestExecutorInfoCarriesAPerExecutorSecret(t *testing.T) {
	b := newTestBackend(&recorder{})
	b.secret = "application-secret-0123456789"
	b.set.taskCPUs, b.driverHost = 1, "127.0.0.1"
	settings := func(id string) fineexec.Settings {
		t.Helper()
		info := b.executorInfo(id, nil)
		s, err := fineexec.DecodeSettings(info.Data)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(info.Data), b.secret) {
			t.Fatalf("executor %s's data carries the application secret", id)
		}
		return s
	}
	a, c := settings(executorID("S0")), settings(executorID("S1"))
	if a.Secret == "" || a.Secret == c.Secret || a.Secret != resultSecret(b.secret, executorID("S0")) {
		t.Fatalf("result secrets %q and %q: want distinct per-executor derivations", a.Secret, c.Secret)
	}
}
