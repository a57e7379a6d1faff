package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestEveryErrorIsPrintedOnce runs failing commands and checks the whole
// of what the user sees about the failure: one message, in one place, and
// the exit code (1 failed job, 2 usage error with a pointer to --help).
func TestEveryErrorIsPrintedOnce(t *testing.T) {
	_, job := ownJob(t)
	cases := []struct {
		name  string
		args  []string
		code  int
		error string // the line that reports the failure, once
		more  []string
	}{
		{"unknown flag", []string{"submit", "--bogus"}, 2,
			"flint: unknown flag: --bogus (job arguments that start with '-' go after --)", []string{"Run 'flint submit --help' for usage."}},
		{"bad master", []string{"submit", "--example", "pi", "--master", "yarn"}, 2,
			`flint: config: flint.master = "yarn" (from --master flag)`, []string{"Run 'flint submit --help' for usage."}},
		{"bad value", []string{"submit", "--example", "pi", "--conf", "flint.cores.max=-1"}, 2,
			`flint: config: flint.cores.max = "-1" (from --conf flint.cores.max): invalid value: want a whole number ≥ 1`, []string{"Run 'flint submit --help' for usage."}},
		{"unknown command", []string{"sumbit"}, 2, `flint: unknown command "sumbit" for "flint"`, []string{"Run 'flint --help' for usage."}},
		{"failing task", []string{"submit", "--master", "local[2]", job, "error"}, 1,
			"myjob: framework: job 0 (failjob) aborted: task ", []string{"most recent failure: task refused its input"}},
		{"panicking task", []string{"submit", "--master", "local[2]", job, "panic"}, 1,
			"myjob: framework: job 0 (failjob) aborted: task ", []string{"task stack:", "main.init.func1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, errOut, code := runFlint(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", code, c.code, errOut)
			}
			if n := countLines(errOut, c.error); n != 1 {
				t.Errorf("the error line %q appears %d times, want once:\n%s", c.error, n, errOut)
			}
			for _, m := range c.more {
				if n := strings.Count(errOut, m); n != 1 {
					t.Errorf("%q appears %d times, want once:\n%s", m, n, errOut)
				}
			}
			if c.code == 2 && !strings.Contains(errOut, "Did you mean") && strings.Count(errOut, "\n") != 2 {
				t.Errorf("a usage error prints more than the error and the pointer to --help (nothing may start):\n%s", errOut)
			}
			for _, bad := range []string{"Error:", "level=error", "aborted: task 0 of stage 0 failed 1 times"} {
				if strings.Contains(errOut, bad) {
					t.Errorf("stderr contains %q:\n%s", bad, errOut)
				}
			}
		})
	}
}

func countLines(s, prefix string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

func TestSigintExits130(t *testing.T) {
	_, job := ownJob(t)
	cmd := exec.Command(job, "--master", "local[2]", "sleep")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "failjob: running sleep\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("first line %q, %v", line, err)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("the job did not stop on SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d after SIGINT, want 130\nstderr:\n%s", code, errOut.String())
	}
	if n := strings.Count(errOut.String(), "myjob: interrupted by SIGINT; running tasks were killed\n"); n != 1 {
		t.Errorf("the interruption is reported %d times, want once:\nstderr:\n%s", n, errOut.String())
	}
}

func TestDriverFlagAfterTheJobsFirstArgumentIsRefused(t *testing.T) {
	_, errOut, code := runFlint(t, "submit", "--example", "wordcount", "in.txt", "--master", "local[2]")
	want := `flint: submit: flag --master comes after the job's first argument "in.txt", so it would be passed to the job; ` +
		`put Flint's flags before "in.txt", or write -- before it to pass it to the job` + "\nRun 'flint submit --help' for usage.\n"
	if code != 2 || errOut != want {
		t.Fatalf("exit %d, stderr:\n%s\nwant 2 and:\n%s", code, errOut, want)
	}
}

func TestWordcountOnAMissingFileFailsBeforeAnyClusterStarts(t *testing.T) {
	_, errOut, code := runFlint(t, "submit", "--example", "wordcount", "/no/such/file.txt")
	want := "flint: wordcount: input file /no/such/file.txt does not exist\nRun 'flint submit --help' for usage.\n"
	if code != 2 || errOut != want {
		t.Fatalf("exit %d, stderr:\n%s\nwant 2 and exactly:\n%s", code, errOut, want)
	}
}

func TestVersionFlags(t *testing.T) {
	for _, arg := range []string{"--version", "-v", "version"} {
		out, _, code := runFlint(t, arg)
		if code != 0 || !strings.HasPrefix(out, "flint ") || !strings.Contains(out, "(revision ") || strings.Count(out, "\n") != 1 {
			t.Errorf("flint %s: exit %d, %q", arg, code, out)
		}
	}
	// The revision printed is the one Go recorded in the binary.
	info, err := exec.Command("go", "version", "-m", flintBin).Output()
	if err != nil {
		t.Fatal(err)
	}
	rev := "unknown"
	for _, l := range strings.Split(string(info), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "build" && strings.HasPrefix(f[1], "vcs.revision=") {
			rev = strings.TrimPrefix(f[1], "vcs.revision=")
		}
	}
	if out, _, _ := runFlint(t, "-v"); !strings.Contains(out, "(revision "+rev) {
		t.Errorf("flint -v = %q; go version -m says revision %s", out, rev)
	}
}

func TestUnreachableMasterSaysSoOnceAndFails(t *testing.T) {
	addr := freePort(t) // closed again: nothing listens there
	_, errOut, code := runFlint(t, "submit", "--example", "pi", "--master", "mesos://"+addr, "--conf", "flint.mesos.connectTimeout=2s")
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstderr:\n%s", code, errOut)
	}
	warn := "mesosconn: cannot reach the Mesos master at " + addr + " (connection refused); retrying for 2s"
	final := "flint: cannot reach the Mesos master mesos://" + addr + " within 2s (connection refused); check the master's address, or raise flint.mesos.connectTimeout\n"
	if strings.Count(errOut, warn) != 1 || !strings.HasSuffix(errOut, final) || strings.Count(errOut, "cannot reach") != 2 {
		t.Errorf("stderr:\n%s\nwant the warning %q once and the final error %q", errOut, warn, final)
	}
	if strings.Contains(errOut, "lost") || strings.Contains(errOut, "re-subscribing") {
		t.Errorf("a connection never made is reported lost:\n%s", errOut)
	}
}

// TestDyingExecutorOnTheEmbeddedMaster is the newcomer's view of a task
// that kills its executor: exit 1, one warning line per dead executor, and
// the job error with the exit status, the executor's last stderr lines and
// the sandbox the driver kept.
func TestDyingExecutorOnTheEmbeddedMaster(t *testing.T) {
	_, job := ownJob(t)
	tmp := t.TempDir()
	cmd := exec.Command(job, "exit")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	err := cmd.Run()
	if cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1\nstderr:\n%s", err, errOut.String())
	}
	stderr := errOut.String()
	final := stderr[strings.LastIndex(stderr, "myjob: "):]
	for _, want := range []string{
		"myjob: framework: job 0 (failjob) aborted: task ", " failed 4 times, most recent failure: executor ",
		" and ended: Command exited with status 3 (TASK_FAILED, REASON_COMMAND_EXECUTOR_FAILED)\n",
		"    FATAL: the disk is on fire\n", "  its sandbox: " + tmp + "/flint-embedded-",
	} {
		if !strings.Contains(final, want) {
			t.Errorf("the final error lacks %q:\n%s", want, final)
		}
	}
	if n := strings.Count(stderr, "FATAL: the disk is on fire"); n != 1 {
		t.Errorf("the executor's stderr is shown %d times, want once (in the error):\n%s", n, stderr)
	}
	if !strings.Contains(stderr, "embedded: kept the sandboxes of the failed executors and tasks in "+tmp+"/flint-embedded-") {
		t.Errorf("the driver does not say where it kept the sandboxes:\n%s", stderr)
	}
}
