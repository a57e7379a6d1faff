package fine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/internal/driverseam"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
	"github.com/flint-mesos/flint/internal/testkit/stagecheck"
	"github.com/flint-mesos/flint/shuffle/shuffleservice"
)

// shuffleDirs are the directories of shuffle id in the executors' stores
// the service keeps for application app.
func shuffleDirs(t *testing.T, svcDir, app, id string) []string {
	t.Helper()
	ds, err := filepath.Glob(filepath.Join(shuffleservice.AppDir(svcDir, app), "*", "shuffle_"+id))
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// The fine backend, like coarse, keeps its application registered with
// the agents' shuffle service while it runs, has the service delete a
// released shuffle's files once the executors that wrote them are gone,
// and says goodbye when it stops: after a two-shuffle job whose executors
// exit on idle (the service holds their outputs), with the service's
// clock moved past its --app-timeout, a heartbeat comes at the new time
// and the sweep keeps the files; ReleaseShuffle(0) deletes shuffle 0's
// files from the service's directory, not shuffle 1's; Stop removes the
// application's files at once (no sweep).
func TestDriverHeartbeatsTheShuffleServiceAndSaysGoodbye(t *testing.T) {
	svcDir := t.TempDir()
	log, _ := mesostest.Logger(t)
	fk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	svc, err := shuffleservice.Start(shuffleservice.Config{Dir: svcDir, Host: "127.0.0.1", TLS: true, Log: log,
		AppTimeout: time.Minute, SweepEvery: -1, Clock: fk})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.shuffle.service.enabled=true", "flint.shuffle.service.dir="+svcDir,
		"flint.executor.heartbeatInterval=200ms", "flint.mesos.fine.executorIdleTimeout=1s")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stagecheck.Run(ctx, t, r.fc, 0, 1)
	es, err := os.ReadDir(shuffleservice.AppsDir(svcDir))
	if err != nil || len(es) != 1 {
		t.Fatalf("applications registered with the service: %v, %v", es, err)
	}
	app := es[0].Name()

	fk.Advance(2 * time.Minute)
	waitFor(t, 30*time.Second, "a heartbeat after the service's clock moved", func() bool {
		last, ok := svc.LastHeard(app)
		return ok && last.Equal(fk.Now())
	})
	if removed := svc.Sweep(); len(removed) != 0 {
		t.Fatalf("the sweep removed %v while the driver runs", removed)
	}

	waitFor(t, 30*time.Second, "the idle executors to exit", func() bool { return len(executors(r.mark)) == 0 })
	if n0, n1 := len(shuffleDirs(t, svcDir, app, "0")), len(shuffleDirs(t, svcDir, app, "1")); n0 == 0 || n1 == 0 {
		t.Fatalf("the service holds shuffle 0 in %d and shuffle 1 in %d executor stores after its executors exited; want both kept", n0, n1)
	}
	if !driverseam.Of(r.fc).Driver.ReleaseShuffle(0) {
		t.Fatal("shuffle 0 not released")
	}
	waitFor(t, 30*time.Second, "the service to delete released shuffle 0", func() bool { return len(shuffleDirs(t, svcDir, app, "0")) == 0 })
	if n := len(shuffleDirs(t, svcDir, app, "1")); n == 0 {
		t.Fatal("shuffle 1 (not released) is gone from the service's directory")
	}

	if err := r.fc.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(shuffleservice.AppDir(svcDir, app)); !os.IsNotExist(err) {
		t.Fatalf("the application's files after the driver stopped: %v (want them removed)", err)
	}
}
