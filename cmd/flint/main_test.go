package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

var flintBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "flint-cli")
	if err != nil {
		panic(err)
	}
	flintBin = filepath.Join(dir, "flint")
	if out, err := exec.Command("go", "build", "-o", flintBin, ".").CombinedOutput(); err != nil {
		panic("build flint: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func runFlint(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(flintBin, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestSubmitPiPrintsEstimate(t *testing.T) {
	out, errOut, code := runFlint(t, "submit", "--example", "pi", "--master", "local[2]", "10", "20000")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
	if !regexp.MustCompile(`Pi is roughly 3\.1[0-9]+ \(10 slices × 20000 samples\)`).MatchString(out) {
		t.Fatalf("stdout %q lacks the estimate", out)
	}
	if !strings.Contains(errOut, "executor driver added on localhost with 2 cores") {
		t.Fatalf("stderr lacks the executor:\n%s", errOut)
	}
}

func TestSubmitWordcountOnAFile(t *testing.T) {
	f := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(f, []byte("b a b\nc b a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runFlint(t, "submit", "--example", "wordcount", "--master", "local[2]", "--", "--partitions", "2", f)
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
	if !strings.Contains(out, "6 words, 3 distinct\n") || !regexp.MustCompile(`\s3  b\n\s+2  a\n\s+1  c`).MatchString(out) {
		t.Fatalf("unexpected output:\n%s", out)
	}
}

func TestSubmitErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"submit", "--example", "nope"}, `no example "nope"`},
		{[]string{"submit", "--example", "pi", "--master", "yarn"}, `"yarn"`},
		{[]string{"submit", "--example", "pi", "--conf", "flint.task.maxFailures=lots"}, "flint.task.maxFailures"},
		{[]string{"submit"}, "give --example"},
	}
	for _, c := range cases {
		_, errOut, code := runFlint(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("flint %v: exit %d, stderr %q; want failure mentioning %q", c.args, code, errOut, c.want)
		}
	}
}

func TestUnknownRoleIsRefused(t *testing.T) {
	cmd := exec.Command(flintBin)
	cmd.Env = append(os.Environ(), "FLINT_ROLE=warp-drive")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), `"warp-drive"`) {
		t.Fatalf("FLINT_ROLE=warp-drive: %v, %s", err, out)
	}
}

func TestVersion(t *testing.T) {
	out, _, code := runFlint(t, "version")
	if code != 0 || !strings.HasPrefix(out, "flint ") {
		t.Fatalf("version: exit %d, %q", code, out)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func TestMesosLocalServesStateWithBothAgents(t *testing.T) {
	addr := freePort(t)
	cmd := exec.Command(flintBin, "mesos", "local", "--agents", "2", "--listen", addr, "--work-dir", t.TempDir(), "--log-level", "warn")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Slaves []struct {
			ID string `json:"id"`
		} `json:"slaves"`
	}
	waitfor.Poll(15*time.Second, func() bool {
		resp, err := http.Get("http://" + addr + "/state")
		if err != nil {
			return false
		}
		_ = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		return len(st.Slaves) >= 2
	})
	if len(st.Slaves) != 2 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("/state lists %d slaves, want 2\nstderr:\n%s", len(st.Slaves), errOut.String())
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("flint mesos local exited with %v after SIGINT\nstderr:\n%s", err, errOut.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("flint mesos local did not stop on SIGINT")
	}
}

func TestSubmitPiOnTheDefaultEmbeddedMaster(t *testing.T) {
	out, errOut, code := runFlint(t, "submit", "--example", "pi", "--conf", "flint.embedded.workDir="+t.TempDir(), "20", "10000")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
	if !regexp.MustCompile(`Pi is roughly 3\.1[0-9]+ \(20 slices × 10000 samples\)`).MatchString(out) {
		t.Fatalf("stdout %q lacks the estimate", out)
	}
	for _, want := range []string{"embedded", "framework", "executor"} {
		if !strings.Contains(strings.ToLower(errOut), want) {
			t.Errorf("stderr does not mention %q:\n%s", want, errOut)
		}
	}
}
