package fine

import (
	"strings"
	"testing"

	"github.com/flint-mesos/flint/executor/fineexec"
	"github.com/flint-mesos/flint/framework"
)

// An executor's settings carry its own result-server secret, derived from
// the application secret, never the application secret itself.
func TestExecutorInfoCarriesAPerExecutorSecret(t *testing.T) {
	b := newTestBackend(&recorder{})
	b.secret = "application-secret-0123456789"
	b.set.taskCPUs, b.driverHost = 1, "127.0.0.1"
	settings := func(id string) fineexec.Settings {
		t.Helper()
		info := b.executorInfo(id, 0, "h", nil, nil)
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

// Result servers serve TLS by default (flint.network.tls.enabled).
func TestResultServersUseTLSByDefault(t *testing.T) {
	for conf, want := range map[string]bool{"": true, "flint.network.tls.enabled=false": false} {
		cfg := framework.NewConfig()
		if k, v, ok := strings.Cut(conf, "="); ok {
			if err := cfg.Set(k, v); err != nil {
				t.Fatal(err)
			}
		}
		s, err := readSettings(cfg)
		if err != nil {
			t.Fatal(err)
		}
		b := newTestBackend(&recorder{})
		b.set, b.secret, b.driverHost = s, "application-secret-0123456789", "127.0.0.1"
		got, err := fineexec.DecodeSettings(b.executorInfo(executorID("S0"), 0, "h", nil, nil).Data)
		if err != nil || got.TLS != want {
			t.Errorf("%q: Settings.TLS = %v (%v), want %v", conf, got.TLS, err, want)
		}
	}
}
