package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	jobOnce sync.Once
	jobDir  string // the job module, copied outside the tree
	jobBin  string
	jobErr  error
)

// repoRoot is the Flint clone these tests run in.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// ownJob sets up testdata/failjob the way the README's "Your own job"
// tells a newcomer to (a module of their own outside the clone, a go.work
// using it and the clone) and builds it with the module proxy off, so
// nothing but the clone is needed.
func ownJob(t *testing.T) (dir, bin string) {
	t.Helper()
	root := repoRoot(t)
	jobOnce.Do(func() {
		jobDir = filepath.Join(filepath.Dir(flintBin), "myjob")
		if jobErr = os.CopyFS(jobDir, os.DirFS("testdata/failjob")); jobErr != nil {
			return
		}
		for _, args := range [][]string{{"work", "init", ".", root}, {"build", "-o", "myjob", "."}} {
			cmd := exec.Command("go", args...)
			cmd.Dir = jobDir
			cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly")
			if out, err := cmd.CombinedOutput(); err != nil {
				jobErr = &buildError{args: args, out: string(out), err: err}
				return
			}
		}
		jobBin = filepath.Join(jobDir, "myjob")
	})
	if jobErr != nil {
		t.Fatal(jobErr)
	}
	return jobDir, jobBin
}

type buildError struct {
	args []string
	out  string
	err  error
}

func (e *buildError) Error() string {
	return "go " + strings.Join(e.args, " ") + ": " + e.err.Error() + "\n" + e.out
}

func TestOwnJobModuleOutsideTheTreeBuildsAndRuns(t *testing.T) {
	dir, bin := ownJob(t)
	if strings.HasPrefix(dir, repoRoot(t)+string(filepath.Separator)) {
		t.Fatalf("the job module %s is inside the clone", dir)
	}
	work, err := os.ReadFile(filepath.Join(dir, "go.work"))
	if err != nil || !strings.Contains(string(work), repoRoot(t)) {
		t.Fatalf("go.work does not use the clone: %v\n%s", err, work)
	}
	out, errOut, code := runFlint(t, "submit", "--master", "local[2]", bin, "ok")
	if code != 0 || !strings.Contains(out, "failjob: result [1 4]") {
		t.Fatalf("submit %s: exit %d\nstdout:\n%s\nstderr:\n%s", bin, code, out, errOut)
	}
}

func TestSubmitASourceDirectoryBuildsIt(t *testing.T) {
	dir, _ := ownJob(t)
	out, errOut, code := runFlint(t, "submit", "--master", "local[2]", dir, "ok")
	if code != 0 || !strings.Contains(out, "failjob: result [1 4]") {
		t.Fatalf("submit %s: exit %d\nstdout:\n%s\nstderr:\n%s", dir, code, out, errOut)
	}
	if !strings.Contains(errOut, "flint: building "+dir+": go build -o ") {
		t.Errorf("stderr does not say how the job was built:\n%s", errOut)
	}
}

func TestSubmitANonExecutableFileSaysWhatToRun(t *testing.T) {
	f := filepath.Join(t.TempDir(), "myjob")
	if err := os.WriteFile(f, []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runFlint(t, "submit", f)
	want := "flint: submit: job " + f + " is not executable (build it with `go build -o myjob .` in its source directory)\n"
	if code != 2 || !strings.HasPrefix(errOut, want) {
		t.Fatalf("exit %d, stderr %q; want 2 and %q", code, errOut, want)
	}
}
