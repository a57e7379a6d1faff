package shuffleenv_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
	"github.com/flint-mesos/flint/shuffle/shuffleserver"
	"github.com/flint-mesos/flint/shuffle/shuffleservice"
)

// A live executor re-registers with its agent's shuffle service when the
// service restarts: the service dies with the files it held (its
// directory's applications removed) and a new one starts on the same
// directory, on a new port with a new certificate. What must happen, and
// is asserted: while no service runs, outputs still name the dead one;
// once the new one runs, the executor has registered the application
// there again (its token, its store's directory), its map statuses and
// its namespaces name the new service, and a reducer on another host reads
// every output written after the restart from the new service with counts
// equal to the ones written; an output written before the restart names
// the dead service, and reading it is a fetch failure naming that service
// (the driver recomputes it), never a wrong or empty block.
func TestExecutorReRegistersWithARestartedService(t *testing.T) {
	dir := t.TempDir()
	first := startService(t, dir)
	w, err := startWithService(t, "exec-w", "127.0.0.1", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tr := mapoutput.NewTracker(mapoutput.DefaultConfig())
	if _, err := writeCounts(t, w, tr, 7, 3); err != nil {
		t.Fatal(err)
	}
	checkNames(t, "before the restart", w.Location(), first.Address())

	first.Close()
	if err := os.RemoveAll(shuffleservice.AppsDir(dir)); err != nil {
		t.Fatal(err)
	}
	checkNames(t, "while no service runs", w.Location(), first.Address())

	second := startService(t, dir)
	if second.Address().HostPort == first.Address().HostPort || second.Address().Pin == first.Address().Pin {
		t.Fatalf("the new service %s has the dead one's port or pin %s", second.Address(), first.Address())
	}
	want, err := writeCounts(t, w, tr, 8, 3)
	if err != nil {
		t.Fatal(err)
	}
	checkNames(t, "after the restart", w.Location(), second.Address())
	if _, err := os.Stat(filepath.Join(shuffleservice.AppDir(dir, app), "token.sha256")); err != nil {
		t.Fatalf("the application is not registered with the new service: %v", err)
	}
	n, err := w.Namespace("run-1")
	if err != nil {
		t.Fatal(err)
	}
	checkNames(t, "namespace run-1", n.Location(), second.Address())

	r := start(t, "exec-r", "localhost", t.TempDir(), true)
	defer r.Close()
	got := map[string]int64{}
	var remote int64
	for p := range 3 {
		m, err := readCounts(r, tr, 8, p, got)
		if err != nil {
			t.Fatalf("reduce %d of the outputs written after the restart: %v", p, err)
		}
		remote += m
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("counts read from the new service differ from the ones written: %d words, want %d", len(got), len(want))
	}
	if remote == 0 {
		t.Fatal("no block was fetched from the new service")
	}
	if heard, ok := second.LastHeard(app); !ok || heard.IsZero() {
		t.Fatal("the new service never served the application")
	}

	_, err = readCounts(r, tr, 7, 0, map[string]int64{})
	var ff *mapoutput.FetchFailure
	if !errors.As(err, &ff) || ff.ShuffleID != 7 || ff.ExecutorID != "exec-w" {
		t.Fatalf("reading an output the dead service held: %v; want a fetch failure of shuffle 7 from exec-w", err)
	}
	if a, _ := shuffleserver.ParseAddress(ff.Address); a.HostPort != first.Address().HostPort {
		t.Fatalf("the fetch failure names %s; want the dead service %s", ff.Address, first.Address())
	}
}

func startService(t testing.TB, dir string) *shuffleservice.Service {
	t.Helper()
	svc, err := shuffleservice.Start(shuffleservice.Config{Dir: dir, Host: "127.0.0.1", TLS: true, SweepEvery: -1, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	return svc
}

// checkNames asserts that loc is in service svc's store of exec-w.
func checkNames(t *testing.T, when string, loc mapoutput.Location, svc shuffleserver.Address) {
	t.Helper()
	a, err := shuffleserver.ParseAddress(loc.Address)
	if err != nil || a.HostPort != svc.HostPort || a.Pin != svc.Pin || a.Executor != "exec-w" {
		t.Fatalf("%s: outputs at %q (%v); want the service %s for executor exec-w", when, loc.Address, err, svc)
	}
}

// writeCounts writes 2 map outputs of shuffleID with e, registers them
// in tr and returns the word counts written.
func writeCounts(t *testing.T, e *shuffleenv.Env, tr *mapoutput.Tracker, shuffleID, reduces int) (map[string]int64, error) {
	t.Helper()
	if err := tr.RegisterShuffle(shuffleID, 2, reduces); err != nil {
		return nil, err
	}
	want := map[string]int64{}
	for m := range 2 {
		w, err := shuffleenv.CombiningWriter(e, shuffleID, m, 0, reduces, strs, ints, sum)
		if err != nil {
			return nil, err
		}
		for i := range 3000 {
			word := fmt.Sprintf("s%d-w%d", shuffleID, (i*(m+5))%900)
			want[word]++
			if err := w.Add(partition(word, reduces), word, 1); err != nil {
				return nil, err
			}
		}
		res, err := w.Commit()
		if err != nil {
			return nil, err
		}
		if err := tr.RegisterMapOutput(e.Status(shuffleID, m, uint64(200+m), res)); err != nil {
			return nil, err
		}
	}
	return want, nil
}

// readCounts reads reduce partition p of shuffleID with e into got and
// returns the blocks fetched remotely.
func readCounts(e *shuffleenv.Env, tr *mapoutput.Tracker, shuffleID, p int, got map[string]int64) (int64, error) {
	snap, err := tr.Snapshot(shuffleID)
	if err != nil {
		return 0, err
	}
	rd, err := e.Read(context.Background(), snap, p, shuffle.ByteOrder, shuffle.CombineBytes(ints, sum.MergeCombiners))
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	for kv, err := range shuffle.Records(rd, strs, ints) {
		if err != nil {
			return 0, err
		}
		if _, dup := got[kv.Key]; dup {
			return 0, fmt.Errorf("%q read twice", kv.Key)
		}
		got[kv.Key] = kv.Value
	}
	return rd.Metrics().RemoteBlocks, nil
}

// While no service runs after one died with its files, a reduce on the
// executor that wrote the outputs (a same-host read, from disk) fails to
// fetch the lost blocks — a fetch failure naming the executor, which makes
// the driver recompute them — rather than failing the task for its own
// store's missing directory.
func TestReadWhileTheServiceIsDownIsAFetchFailure(t *testing.T) {
	dir := t.TempDir()
	svc := startService(t, dir)
	w, err := startWithService(t, "exec-w", "127.0.0.1", dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tr := mapoutput.NewTracker(mapoutput.DefaultConfig())
	if _, err := writeCounts(t, w, tr, 7, 2); err != nil {
		t.Fatal(err)
	}
	svc.Close()
	if err := os.RemoveAll(shuffleservice.AppsDir(dir)); err != nil {
		t.Fatal(err)
	}
	_, err = readCounts(w, tr, 7, 1, map[string]int64{})
	var ff *mapoutput.FetchFailure
	if !errors.As(err, &ff) || ff.ShuffleID != 7 || ff.ReduceIndex != 1 || ff.ExecutorID != "exec-w" {
		t.Fatalf("reading outputs lost with the service: %v; want a fetch failure of shuffle 7 reduce 1 from exec-w", err)
	}
	if left, _ := filepath.Glob(filepath.Join(w.Dir(), "reduce-*")); len(left) != 0 {
		t.Fatalf("reduce spill dirs left: %v", left)
	}
}
