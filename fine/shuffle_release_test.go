package fine_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/driverseam"
	"github.com/flint-mesos/flint/internal/testkit/stagecheck"
)

// mapOutputs lists the committed map outputs (.data files) of shuffle
// shuffleID in the executors' shuffle directories below workDir.
func mapOutputs(t *testing.T, workDir string, shuffleID int) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(workDir, func(p string, d os.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case d.IsDir() && d.Name() == "meta":
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".data") && !strings.HasPrefix(d.Name(), ".") &&
			filepath.Base(filepath.Dir(p)) == fmt.Sprintf("shuffle_%d", shuffleID) && strings.Contains(p, "flint-shuffle-") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Context.ReleaseShuffle reaches fine executors as a framework message:
// they delete the shuffle's outputs while the application runs, and a
// later job over the same lineage recomputes them.
func TestReleasedShufflesAreDeletedOnFineExecutors(t *testing.T) {
	work := t.TempDir()
	c := startCluster(t, clusterOpts{workDir: work})
	r := mustRun(t, mesosURL(c))
	st := stagecheck.Listen(r.fc)
	waitFor(t, 60*time.Second, "two executors", func() bool { return st.Executors() >= 2 })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	stagecheck.Run(ctx, t, r.fc, 0, 1)
	if a, b := len(mapOutputs(t, work, 0)), len(mapOutputs(t, work, 1)); a != 4 || b != 3 {
		t.Fatalf("%d outputs of shuffle 0 and %d of shuffle 1 on the executors, want 4 and 3 (one per map task)", a, b)
	}
	if !driverseam.Of(r.fc).Driver.ReleaseShuffle(0) {
		t.Fatal("shuffle 0 not released")
	}
	waitFor(t, 10*time.Second, "the executors to delete shuffle 0's outputs", func() bool { return len(mapOutputs(t, work, 0)) == 0 })
	if n := len(mapOutputs(t, work, 1)); n != 3 {
		t.Fatalf("shuffle 1's outputs after shuffle 0's release: %d, want 3", n)
	}
	if !driverseam.Of(r.fc).Driver.ReleaseShuffle(1) {
		t.Fatal("shuffle 1 not released")
	}
	waitFor(t, 10*time.Second, "the executors to delete shuffle 1's outputs", func() bool { return len(mapOutputs(t, work, 1)) == 0 })
	stagecheck.Run(ctx, t, r.fc, 0, 1) // recomputed, same result
}
