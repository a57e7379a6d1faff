package mesosbackend

import (
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/config"
)

func loadConfig(t *testing.T, conf ...string) *config.Config {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Conf: conf})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func readExecutor(t *testing.T, conf ...string) Executor {
	t.Helper()
	e, errs := ReadExecutor(loadConfig(t, conf...))
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	return e
}

func TestExecutorMemory(t *testing.T) {
	for _, c := range []struct {
		conf       []string
		wantMemMB  float64
		wantLimit  string
		wantOthers map[string]string
	}{
		// the heap floor is gcfloor.ForMemory: 1/16 of flint.executor.memory, at most 256 MiB; no GOGC
		{nil, 1024 + 384, "1024MiB", map[string]string{"FLINT_GC_FLOOR": "67108864", "GOGC": ""}},
		{[]string{"flint.executor.memory=8g"}, 9012, "8192MiB", map[string]string{"FLINT_GC_FLOOR": "268435456", "GOGC": ""}},
		{[]string{"flint.executor.memory=512m", "flint.mesos.executor.memoryOverhead=64m"}, 576, "512MiB", map[string]string{"FLINT_GC_FLOOR": "33554432"}},
		// the user's GOGC: they choose the pacing, and get no floor
		{[]string{"flint.executorEnv.GOGC=50"}, 1024 + 384, "1024MiB", map[string]string{"GOGC": "50", "FLINT_GC_FLOOR": ""}},
		// the user's own limit: the floor still follows flint.executor.memory
		{[]string{"flint.executor.memory=512m", "flint.executorEnv.GOMEMLIMIT=300MiB", "flint.executorEnv.A=b"}, 512 + 384, "300MiB", map[string]string{"A": "b", "GOGC": "", "FLINT_GC_FLOOR": "33554432"}},
	} {
		e := readExecutor(t, c.conf...)
		if e.MemMB != c.wantMemMB {
			t.Errorf("%v: MemMB = %g, want %g", c.conf, e.MemMB, c.wantMemMB)
		}
		if got := e.Env[EnvMemLimit]; got != c.wantLimit {
			t.Errorf("%v: GOMEMLIMIT = %q, want %q", c.conf, got, c.wantLimit)
		}
		for k, v := range c.wantOthers {
			if e.Env[k] != v {
				t.Errorf("%v: env %s = %q, want %q", c.conf, k, e.Env[k], v)
			}
		}
	}
}

func TestReadExecutorURIsAndHash(t *testing.T) {
	e := readExecutor(t, "flint.executor.uri=https://h/rel/flint?sig=1", "flint.executor.sha256="+strings.Repeat("AB", 32))
	if e.Command != "./flint" || e.SHA256 != strings.Repeat("ab", 32) {
		t.Errorf("command %q, sha %q", e.Command, e.SHA256)
	}
	for _, c := range [][]string{
		{"flint.executor.sha256=abc"},
		{"flint.executor.uri=https://h/dir/"},
		{"flint.mesos.uris=https://h/ok.txt,http://h"},
	} {
		if _, errs := ReadExecutor(loadConfig(t, c...)); len(errs) != 1 {
			t.Errorf("%v: errors %v, want one", c, errs)
		}
	}
}
