package dataset_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/stagecheck"
)

// pathArgs names an input, and a directory the driver moves into once the
// job is planned (as an executor's sandbox is elsewhere than the driver's
// working directory).
type pathArgs struct {
	Input, MoveTo string
	Remove        bool // remove Input once planned: no executor can read it
}

var pathLines = map[string][]string{}

var pathJob = dataset.Job("test.paths", func(b *dataset.Builder, a pathArgs) error {
	lines := dataset.TextFile(b, a.Input)
	if b.Driver() && a.MoveTo != "" {
		if err := os.Chdir(a.MoveTo); err != nil {
			return err
		}
	}
	if b.Driver() && a.Remove {
		if err := os.Remove(a.Input); err != nil {
			return err
		}
	}
	got, err := dataset.Collect(lines)
	if err != nil {
		return err
	}
	if b.Driver() {
		pathLines[a.Input] = got
	}
	return nil
})

// A relative input is resolved against the driver's working directory when
// the job is planned: tasks running in another directory read the same
// file.
func TestRelativeInputResolvesOnTheDriver(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(dir, "in.txt"), "alpha\nbeta\n")
	t.Chdir(dir)
	fc := localContext(t)
	if _, err := pathJob.Run(context.Background(), fc, pathArgs{Input: "in.txt", MoveTo: elsewhere}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(pathLines["in.txt"], ","); got != "alpha,beta" {
		t.Fatalf("read %q, want alpha,beta", got)
	}
}

// A local input the executor cannot open fails the job at once — one
// attempt, not flint.task.maxFailures — with one error naming the path, the
// executor's host and the ways to make the path reach the executors.
func TestUnreadableInputFailsAtOnceNamingPathAndHost(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "gone.txt")
	writeFile(t, in, "x\n")
	rec := &stagecheck.TaskEnds{}
	cfg := framework.NewConfig()
	if err := cfg.Set("flint.master", "local[2,4]"); err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(&bytes.Buffer{})
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log), framework.WithListener(rec))
	if err != nil {
		t.Fatal(err)
	}
	_, err = pathJob.Run(context.Background(), fc, pathArgs{Input: in, Remove: true})
	if serr := fc.Stop(context.Background()); serr != nil { // Stop drains the bus
		t.Fatal(serr)
	}
	if err == nil || !strings.Contains(err.Error(), dataset.ErrInputUnreadable.Error()) {
		t.Fatalf("error %v, want ErrInputUnreadable's (errors cross processes as text)", err)
	}
	host, _ := os.Hostname()
	for _, want := range []string{in, "host " + host, "shared", "http(s)://", "AddFile", "retrying cannot fix it"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if n := strings.Count(err.Error(), in); n != 1 {
		t.Errorf("error names the path %d times, want once: %v", n, err)
	}
	if ends := rec.Ends(); len(ends) != 1 || ends[0].State != "FAILED" {
		t.Fatalf("task ends %+v, want exactly one failed attempt", ends)
	}
}

// A directory's files that are not text (a NUL byte in their first 8 KiB)
// are skipped with one warning naming them; a file named explicitly is
// read whatever it holds.
func TestDirectoryInputSkipsBinaryFilesWithAWarning(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.md"), "one two\n")
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR words inside\n"
	writeFile(t, filepath.Join(dir, "pic.png"), png)
	fc, logs := loggedContext(t)
	if _, err := wordCountJob.Run(context.Background(), fc, wcArgs{Paths: []string{dir}, Parts: 2}); err != nil {
		t.Fatal(err)
	}
	got := wcOut[dir].v
	if len(got) != 2 || got["one"] != 1 || got["two"] != 1 {
		t.Fatalf("counted %v, want one and two once each (the PNG skipped)", got)
	}
	warn := logs.String()
	if !strings.Contains(warn, "skipped 1 file that is not text") || !strings.Contains(warn, filepath.Join(dir, "pic.png")) {
		t.Fatalf("no warning naming the skipped file in %q", warn)
	}

	explicit := filepath.Join(dir, "pic.png")
	if _, err := wordCountJob.Run(context.Background(), fc, wcArgs{Paths: []string{explicit}, Parts: 2}); err != nil {
		t.Fatal(err)
	}
	if got := wcOut[explicit].v; got["words"] != 1 || got["inside"] != 1 {
		t.Fatalf("an explicitly named file was not read: %v", got)
	}
}

// An empty directory is a warning (a path matching nothing is an error).
func TestEmptyDirectoryInputWarns(t *testing.T) {
	dir := t.TempDir()
	fc, logs := loggedContext(t)
	if _, err := wordCountJob.Run(context.Background(), fc, wcArgs{Paths: []string{dir}, Parts: 2}); err != nil {
		t.Fatal(err)
	}
	if got := wcOut[dir].v; len(got) != 0 {
		t.Fatalf("counted %v in an empty directory", got)
	}
	if want := "dataset: input " + dir + " is empty: it holds no file to read"; !strings.Contains(logs.String(), want) {
		t.Fatalf("logs %q do not warn %q", logs.String(), want)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func loggedContext(t *testing.T) (*framework.Context, *syncBuffer) {
	t.Helper()
	cfg := framework.NewConfig()
	if err := cfg.Set("flint.master", "local[2]"); err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	log := logrus.New()
	log.SetOutput(logs)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fc.Stop(context.Background()) })
	return fc, logs
}
