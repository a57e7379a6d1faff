package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestVersionOfABuildInAGitCloneCarriesItsRevision: `go build
// -buildvcs=true ./cmd/flint` in a fresh git clone of this repository
// stamps the clone's HEAD into the binary, and `flint --version` prints it
// (with the pseudo-version Go derives from it), not "unknown". The flag is
// given explicitly since a machine's go env may set GOFLAGS=-buildvcs=false
// (this one does), which a command-line flag overrides.
func TestVersionOfABuildInAGitCloneCarriesItsRevision(t *testing.T) {
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse --show-toplevel: %v", err)
	}
	tmp := t.TempDir()
	clone := filepath.Join(tmp, "flint")
	if out, err := exec.Command("git", "clone", "-q", strings.TrimSpace(string(top)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	head, err := exec.Command("git", "-C", clone, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	rev := strings.TrimSpace(string(head))
	bin := filepath.Join(tmp, "flint-bin") // outside the clone, which stays clean
	build := exec.Command("go", "build", "-buildvcs=true", "-o", bin, "./cmd/flint")
	build.Dir = clone
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in the clone: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("flint --version: %v", err)
	}
	want := regexp.MustCompile(`^flint v0\.0\.0-\d{14}-` + rev[:12] + ` \(revision ` + rev + `, ` +
		regexp.QuoteMeta(runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH) + `\)\n$`)
	if !want.Match(out) {
		t.Errorf("flint --version built in a clone at %s printed %q, want it to match %s", rev, out, want)
	}
}
