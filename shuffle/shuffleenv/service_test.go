package shuffleenv_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/shuffle/shuffleblock"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
	"github.com/flint-mesos/flint/shuffle/shuffleserver"
	"github.com/flint-mesos/flint/shuffle/shuffleservice"
)

func startWithService(t testing.TB, id, host, serviceDir string) (*shuffleenv.Env, error) {
	t.Helper()
	return shuffleenv.Start(shuffleenv.Settings{AppID: app, ExecutorID: id, Host: host, Token: token, TLS: true, LocalDir: t.TempDir(),
		Memory: 4 << 20, Compression: shuffleblock.S2, MaxRetries: 1, RetryWait: time.Millisecond, Timeout: 10 * time.Second,
		ServiceDir: serviceDir}, true, quiet())
}

// An executor whose agent runs the shuffle service writes its outputs
// where the service serves them; after the executor ends, a reducer on
// another host reads every one of them from the service.
func TestServiceServesTheOutputsOfAnExecutorThatEnded(t *testing.T) {
	dir := t.TempDir()
	svc, err := shuffleservice.Start(shuffleservice.Config{Dir: dir, Host: "127.0.0.1", TLS: true, SweepEvery: -1, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	w, err := startWithService(t, "exec-w", "127.0.0.1", dir)
	if err != nil {
		t.Fatal(err)
	}
	loc, err := shuffleserver.ParseAddress(w.Location().Address)
	if err != nil || loc.HostPort != svc.Address().HostPort || loc.Pin != svc.Address().Pin || loc.Executor != "exec-w" {
		t.Fatalf("the executor's outputs are at %q (%v); want the service %s for executor exec-w", w.Location().Address, err, svc.Address())
	}
	tr, want := wordCount(t, []*shuffleenv.Env{w}, 3)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(shuffleservice.StoreRoot(dir, app, "exec-w")); err != nil {
		t.Fatalf("the executor's store after it ended: %v", err)
	}
	r := start(t, "exec-r", "localhost", t.TempDir(), true)
	defer r.Close()
	got := map[string]int64{}
	var remote int64
	for p := range 3 {
		remote += reduce(t, r, tr, p, got).remote
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("counts differ: %d words, want %d", len(got), len(want))
	}
	if remote == 0 {
		t.Errorf("no block was fetched from the service")
	}
	ns, err := startWithService(t, "exec-n", "127.0.0.1", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	n, err := ns.Namespace("run-1")
	if err != nil {
		t.Fatal(err)
	}
	a, err := shuffleserver.ParseAddress(n.Location().Address)
	if err != nil || a.Executor != "exec-n" || a.Namespace != "run-1" || a.HostPort != svc.Address().HostPort || a.Dir != shuffleservice.NamespaceRoot(dir, app, "exec-n", "run-1") {
		t.Errorf("namespace run-1 at %q (%v)", n.Location().Address, err)
	}
	if ns.HoldsOutputs() {
		t.Errorf("an executor whose outputs the service holds says it holds outputs (a fine executor would not exit on idle)")
	}
}

// Without a service on the agent the executor does not start, and says
// what to run.
func TestServiceMissingStopsTheExecutor(t *testing.T) {
	dir := t.TempDir()
	_, err := startWithService(t, "exec-w", "127.0.0.1", dir)
	if !errors.Is(err, shuffleservice.ErrNotRunning) || !strings.Contains(err.Error(), "flint.shuffle.service.enabled") || !strings.Contains(err.Error(), "flint shuffle-service --dir "+dir) {
		t.Errorf("start without a service: %v", err)
	}
}
