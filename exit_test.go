package flint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"syscall"
	"testing"
)

func TestExitCodes(t *testing.T) {
	child := exec.Command("sh", "-c", "exit 7").Run()
	cases := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("job failed"), 1},
		{Usage(errors.New("bad flag"), "x --help"), 2},
		{fmt.Errorf("wrapped: %w", Usage(errors.New("bad"), "")), 2},
		{&InterruptedError{Signal: os.Interrupt, Err: context.Canceled}, 130},
		{&InterruptedError{Signal: syscall.SIGTERM}, 143},
		{&InterruptedError{Signal: syscall.SIGPIPE}, 141},
		{fmt.Errorf("submit job: %w", child), 7},
	}
	for _, c := range cases {
		if got := ExitCode(c.err); got != c.want {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestReportPrintsOnce(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{errors.New("framework: job 0 aborted: boom"), "prog: framework: job 0 aborted: boom\n"},
		{Usage(errors.New("unknown flag: --x"), "prog --help"), "prog: unknown flag: --x\nRun 'prog --help' for usage.\n"},
		{&InterruptedError{Signal: os.Interrupt, Err: context.Canceled}, "prog: interrupted by SIGINT; running tasks were killed\n"},
		{fmt.Errorf("submit: %w", exec.Command("sh", "-c", "exit 3").Run()), ""}, // the child printed its own error
	}
	for _, c := range cases {
		var b bytes.Buffer
		Report(&b, "prog", c.err)
		if b.String() != c.want {
			t.Errorf("Report(%v) printed %q, want %q", c.err, b.String(), c.want)
		}
	}
}

func TestVersionStringCarriesModuleVersionAndRevision(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/flint-mesos/flint", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "true"}}}
	want := "flint v0.3.0 (revision 0123abcd+modified, " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH + ")"
	if got := versionString("dev", bi); got != want {
		t.Errorf("versionString = %q, want %q", got, want)
	}
	// -ldflags -X wins over the module version; a devel build without VCS
	// stamping says so.
	if got := versionString("v9", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}); got != "flint v9 (revision unknown, "+runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH+")" {
		t.Errorf("versionString with ldflags = %q", got)
	}
}
