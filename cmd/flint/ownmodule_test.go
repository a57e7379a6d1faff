package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeBlock is the first code block of kind lang after the README's
// heading, line by line.
func readmeBlock(t *testing.T, heading, lang string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut("\n"+string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README has no %q", heading)
	}
	_, after, ok = strings.Cut(after, "```"+lang+"\n")
	block, _, ok2 := strings.Cut(after, "\n```")
	if !ok || !ok2 {
		t.Fatalf("README's %q has no %s block", heading, lang)
	}
	return strings.Split(block, "\n")
}

// The README's own-module recipe, run line by line as written by bash in a
// directory outside the tree (issue 23, item 10): `go mod init`, the
// `replace` directive, `go mod tidy` (dependencies from the Go module
// proxy), `go vet`, `go build`, the job run directly and by `flint submit .`,
// and the FROM scratch Docker image, which is then run. The clone is
// ~/src/flint in a HOME of the test's: links to this checkout's files plus
// the flint binary the README says to build there. main.go is the page's
// first example, given the package clause and imports it leaves out.
func TestReadmeOwnModuleRecipe(t *testing.T) {
	if _, err := exec.LookPath("docker"); err != nil {
		t.Fatalf("the recipe ends with a docker build and this test runs it: %v", err)
	}
	root := repoRoot(t)
	home := t.TempDir()
	clone := filepath.Join(home, "src", "flint")
	if err := os.MkdirAll(clone, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "flint" {
			if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(clone, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Symlink(flintBin, filepath.Join(clone, "flint")); err != nil {
		t.Fatal(err)
	}
	example := strings.Join(readmeBlock(t, "# Flint", "go"), "\n")
	mainGo := filepath.Join(home, "main.go")
	if err := os.WriteFile(mainGo, []byte("package main\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\n\t\"github.com/flint-mesos/flint\"\n\t\"github.com/flint-mesos/flint/framework\"\n)\n\n"+example+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	var script []string
	for _, line := range readmeBlock(t, "## Your own job", "sh") {
		switch {
		case strings.HasPrefix(line, "git clone "):
			continue // the clone is made above
		case strings.HasPrefix(line, "# write main.go"):
			line = "cp " + mainGo + " main.go"
		}
		script = append(script, line)
	}
	if len(script) < 9 || !strings.Contains(strings.Join(script, "\n"), "go mod tidy") {
		t.Fatalf("the recipe changed shape:\n%s", strings.Join(script, "\n"))
	}
	image := "myjob"
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", image).Run() })
	work := t.TempDir()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", strings.Join(script, "\n"))
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "HOME="+home, "TMPDIR="+t.TempDir(),
		// the machine's caches, not the test HOME's empty ones
		"GOMODCACHE="+goEnv(t, "GOMODCACHE"), "GOCACHE="+goEnv(t, "GOCACHE"), "GOPATH="+goEnv(t, "GOPATH"))
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("the recipe failed: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errOut.String())
	}
	// plain Go: the squares of 1..4, printed as fmt prints a slice
	var sq []int
	for x := 1; x <= 4; x++ {
		sq = append(sq, x*x)
	}
	want := fmt.Sprint(sq)
	if n := strings.Count(out.String(), want+"\n"); n != 2 {
		t.Errorf("%q printed %d times, want twice (./myjob and flint submit .):\n%s\nstderr:\n%s", want, n, out.String(), errOut.String())
	}
	mod, err := os.ReadFile(filepath.Join(work, "myjob", "go.mod"))
	if err != nil || !strings.Contains(string(mod), "replace github.com/flint-mesos/flint => "+clone) ||
		!strings.Contains(string(mod), "require github.com/flint-mesos/flint ") && !strings.Contains(string(mod), "\tgithub.com/flint-mesos/flint ") {
		t.Errorf("go.mod does not require flint through the replace: %v\n%s", err, mod)
	}
	run, err := exec.Command("docker", "run", "--rm", image, "--master", "local[2]").CombinedOutput()
	if err != nil || !strings.Contains(string(run), want) {
		t.Errorf("docker run %s: %v\n%s", image, err, run)
	}
}

func goEnv(t *testing.T, key string) string {
	t.Helper()
	out, err := exec.Command("go", "env", key).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}
