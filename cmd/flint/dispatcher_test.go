package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	flinthistory "github.com/flint-mesos/flint/framework/history"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/dispatcher"
	"github.com/flint-mesos/flint/framework/mesosconn/detector/zktest"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

var (
	testDriverOnce sync.Once
	testDriverBin  string
	testDriverErr  error
)

// testDriver builds deploy/dispatcher/internal/testdriver, a Flint program
// whose driver sleeps, fails, or fails once.
func testDriver(t *testing.T) string {
	t.Helper()
	testDriverOnce.Do(func() {
		testDriverBin = filepath.Join(filepath.Dir(flintBin), "testdriver")
		out, err := exec.Command("go", "build", "-o", testDriverBin, "../../deploy/dispatcher/internal/testdriver").CombinedOutput()
		if err != nil {
			testDriverErr = fmt.Errorf("build testdriver: %w\n%s", err, out)
		}
	})
	if testDriverErr != nil {
		t.Fatal(testDriverErr)
	}
	return testDriverBin
}

// clusterEnv is `flint mesos local` and a `flint dispatcher` on it, as
// processes, with their own HOME (the token file) and directories.
type clusterEnv struct {
	t                        *testing.T
	master, disp, home, work string
	store                    string
	cmdArgs                  []string // the dispatcher's arguments (default: built from master and extra)
	cmd                      *exec.Cmd
	errOut                   *bytes.Buffer
	extra                    []string
	via                      string // the dispatchers' address clients use (default mesos://disp)
}

// url is the address flint submit, status and kill are given.
func (c *clusterEnv) url() string {
	if c.via != "" {
		return c.via
	}
	return "mesos://" + c.disp
}

func startCluster(t *testing.T, dispatcherFlags ...string) *clusterEnv {
	t.Helper()
	c := &clusterEnv{t: t, master: startMesosLocalIn(t, t.TempDir()), home: t.TempDir(), store: t.TempDir(), extra: dispatcherFlags}
	c.startDispatcher()
	return c
}

// startMesosLocalIn is startMesosLocal with a known work directory (the
// drivers' sandboxes are in it).
func startMesosLocalIn(t *testing.T, work string) string {
	t.Helper()
	addr := freePort(t)
	cmd := exec.Command(flintBin, "mesos", "local", "--listen", addr, "--work-dir", work, "--log-level", "warn")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	if !waitfor.Poll(20*time.Second, func() bool { return masterHasAgents(addr, 2) }) {
		t.Fatalf("flint mesos local on %s has not got 2 agents\nstderr:\n%s", addr, errOut.String())
	}
	return addr
}

func (c *clusterEnv) env() []string { return append(os.Environ(), "HOME="+c.home) }

// startDispatcher starts the dispatcher (again, on the same store and port
// after a restart) and waits for its API.
func (c *clusterEnv) startDispatcher() {
	t := c.t
	t.Helper()
	if c.disp == "" {
		c.disp = freePort(t)
	}
	_, port, _ := strings.Cut(c.disp, ":")
	args := append([]string{"dispatcher", "--master", "mesos://" + c.master, "--failover-timeout", "10m", "--min-backoff", "200ms"}, c.extra...)
	if c.cmdArgs != nil {
		args = append([]string(nil), c.cmdArgs...)
	}
	args = append(args, "--port", port, "--store", c.store)
	cmd := exec.Command(flintBin, args...)
	cmd.Env = c.env()
	c.errOut = &bytes.Buffer{}
	cmd.Stderr = c.errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.cmd = cmd
	t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	tokenFile := filepath.Join(c.home, ".flint", "dispatcher", "token")
	if !waitfor.Poll(20*time.Second, func() bool {
		tok, err := dispatcher.ReadToken(tokenFile)
		if err != nil {
			return false
		}
		cl, _ := dispatcher.ClientFor("mesos://"+c.disp, tok)
		_, err = cl.List(context.Background())
		return err == nil || isStandby(err)
	}) {
		t.Fatalf("dispatcher on %s not up\nstderr:\n%s", c.disp, c.errOut.String())
	}
}

// flint runs the flint binary with the cluster's HOME.
func (c *clusterEnv) flint(args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	cmd := exec.Command(flintBin, args...)
	cmd.Env = c.env()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// submit submits in cluster mode and returns the submission id.
func (c *clusterEnv) submit(args ...string) string {
	c.t.Helper()
	out, errOut, code := c.flint(append([]string{"submit", "--deploy-mode", "cluster", "--master", c.url(), "--driver-memory", "256m"}, args...)...)
	id := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(id, "driver-") {
		c.t.Fatalf("submit %v: exit %d, stdout %q\nstderr:\n%s", args, code, out, errOut)
	}
	return id
}

func (c *clusterEnv) client() *dispatcher.Client {
	tok, err := dispatcher.ReadToken(filepath.Join(c.home, ".flint", "dispatcher", "token"))
	if err != nil {
		c.t.Fatal(err)
	}
	cl, _ := dispatcher.ClientFor(c.url(), tok)
	return cl
}

// isStandby reports whether err is a standby dispatcher's answer.
func isStandby(err error) bool {
	var ae *dispatcher.APIError
	return errors.As(err, &ae) && ae.Code == http.StatusServiceUnavailable && strings.HasPrefix(ae.Message, dispatcher.StandbyPrefix)
}

func (c *clusterEnv) status(id string) dispatcher.StatusResponse {
	c.t.Helper()
	st, err := c.client().Status(context.Background(), id)
	if err != nil {
		c.t.Fatalf("status %s: %v", id, err)
	}
	return st
}

// waitState waits until id is in state want.
func (c *clusterEnv) waitState(id string, want dispatcher.State) dispatcher.StatusResponse {
	c.t.Helper()
	var st dispatcher.StatusResponse
	if !waitfor.Poll(90*time.Second, func() bool { st = c.status(id); return st.DriverState == want }) {
		c.t.Fatalf("%s is %s (%s), want %s\ndispatcher stderr:\n%s", id, st.DriverState, st.Message, want, c.errOut.String())
	}
	return st
}

// sandboxFile reads a file of a driver task's sandbox.
func (c *clusterEnv) sandboxFile(work, taskID, name string) string {
	c.t.Helper()
	m, _ := filepath.Glob(filepath.Join(work, "agent-*", "slaves", "*", "frameworks", "*", "executors", taskID, "runs", "latest", name))
	if len(m) != 1 {
		c.t.Fatalf("sandbox %s of %s: %v", name, taskID, m)
	}
	b, _ := os.ReadFile(m[0])
	return string(b)
}

// TestClusterModeRunsWordcount: the example wordcount submitted in cluster
// mode runs as a Mesos task, prints its counts in its sandbox and ends
// FINISHED; flint status --wait says so with exit 0; the page lists it. Two
// drivers write their event logs into one directory, each under its task id
// (flint.app.id, set by the dispatcher): `flint history`'s view of the
// directory has both applications, completed, and the page links each.
func TestClusterModeRunsWordcount(t *testing.T) {
	work, events := t.TempDir(), t.TempDir()
	const history = "http://history.example:18080"
	c := &clusterEnv{t: t, master: startMesosLocalIn(t, work), home: t.TempDir(), store: t.TempDir(),
		extra: []string{"--history-url", history}}
	c.startDispatcher()
	in := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(in, []byte("b a b\nc b a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 2 {
		ids = append(ids, c.submit("--conf", "flint.eventLog.enabled=true", "--conf", "flint.eventLog.dir="+events,
			"--example", "wordcount", "--", "--partitions", "2", in))
	}
	for _, id := range ids {
		out, errOut, code := c.flint("status", "--master", "mesos://"+c.disp, "--wait", "--timeout", "90s", id)
		if code != 0 || out != id+" FINISHED: Command exited with status 0\n" {
			t.Fatalf("status --wait: exit %d %q\n%s\ndispatcher:\n%s", code, out, errOut, c.errOut.String())
		}
	}
	page, _, _ := c.get("/?token=" + c.client().Token)
	logs := flinthistory.New(events)
	for _, id := range ids {
		st := c.status(id)
		if stdout := c.sandboxFile(work, st.TaskID, "stdout"); !strings.Contains(stdout, "6 words, 3 distinct\n") {
			t.Fatalf("driver stdout:\n%s", stdout)
		}
		if !strings.Contains(page, id) || !strings.Contains(page, "Finished drivers") || !strings.Contains(page, "flint mesos logs --master") {
			t.Fatalf("page:\n%s", page)
		}
		if link := history + "/history/" + st.TaskID + "/jobs/"; !strings.Contains(page, `href="`+link+`"`) {
			t.Fatalf("the page does not link %s's event log %s:\n%s", id, link, page)
		}
		store, ok := logs.Store(st.TaskID)
		if !ok {
			t.Fatalf("the event log directory has no application %s: %v", st.TaskID, logs.Apps())
		}
		if app := store.App(); !app.Completed || len(store.Jobs()) == 0 {
			t.Fatalf("application %s in the history: completed %v, %d jobs; want completed with its jobs", st.TaskID, app.Completed, len(store.Jobs()))
		}
	}
}

func (c *clusterEnv) get(path string) (string, int, error) {
	resp, err := http.Get("http://" + c.disp + path)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return b.String(), resp.StatusCode, nil
}

// TestClusterModeFaults: each bad input and fault ends with one clear reason.
func TestClusterModeFaults(t *testing.T) {
	job := testDriver(t)
	c := startCluster(t, "--max-drivers", "1")
	ctx := context.Background()

	t.Run("unauthorised submitter", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "token")
		_ = os.WriteFile(bad, []byte("not-the-dispatchers-token\n"), 0o600)
		_, errOut, code := c.flint("submit", "--deploy-mode", "cluster", "--master", "mesos://"+c.disp, "--token-file", bad, "--example", "pi")
		if code != 1 || !strings.Contains(errOut, "dispatcher: unauthorised") || strings.Count(errOut, "unauthorised") != 1 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
	})
	t.Run("malformed and unknown field", func(t *testing.T) {
		for body, want := range map[string]string{
			`{"action":"CreateSubmissionRequest"`:                              "unexpected EOF",
			`{"action":"CreateSubmissionRequest","sparkProperties":{"a":"b"}}`: `unknown field "sparkProperties" (use "flintProperties"`,
		} {
			req, _ := http.NewRequest("POST", "http://"+c.disp+"/v1/submissions/create", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+c.client().Token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var e dispatcher.ErrorResponse
			_ = json.NewDecoder(resp.Body).Decode(&e)
			resp.Body.Close()
			if resp.StatusCode != 400 || e.Action != "ErrorResponse" || !strings.Contains(e.Message, want) {
				t.Fatalf("%s: %d %+v", body, resp.StatusCode, e)
			}
		}
	})
	t.Run("not a Flint program", func(t *testing.T) {
		script := filepath.Join(t.TempDir(), "notflint")
		_ = os.WriteFile(script, []byte("#!/bin/sh\necho hello\n"), 0o755)
		id := c.submit(script)
		out, _, code := c.flint("status", "--master", "mesos://"+c.disp, "--wait", "--timeout", "90s", id)
		want := id + " FAILED: the program is not a Flint program (its Go build information names no github.com/flint-mesos/flint module); build it with flint.Main\n"
		if code != 1 || out != want {
			t.Fatalf("exit %d\n%q\nwant\n%q", code, out, want)
		}
	})
	t.Run("fetched binary with the wrong checksum", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.ServeFile(w, r, job) }))
		defer srv.Close()
		id, err := c.client().Create(ctx, dispatcher.CreateRequest{AppResource: srv.URL + "/testdriver",
			AppResourceSHA256: strings.Repeat("0", 64), AppArgs: []string{"ok"}, FlintProperties: map[string]string{"flint.driver.memory": "256m"}})
		if err != nil {
			t.Fatal(err)
		}
		st := c.waitState(id, dispatcher.Failed)
		if st.Message != "the fetched program's SHA-256 is not the submitted appResourceSha256" {
			t.Fatalf("message %q", st.Message)
		}
	})
	t.Run("a driver no agent can hold", func(t *testing.T) {
		id := c.submit("--driver-cores", "512", "--example", "pi")
		st := c.waitState(id, dispatcher.Failed)
		if !strings.HasPrefix(st.Message, "no agent can ever run this driver: it needs 512 cpus and 256 MB") {
			t.Fatalf("message %q", st.Message)
		}
	})
	t.Run("a failing driver, unsupervised and supervised", func(t *testing.T) {
		id := c.submit(job, "fail")
		if st := c.waitState(id, dispatcher.Failed); st.Message != "the driver exited with status 1 (see its stderr)" || st.Attempts != 1 {
			t.Fatalf("unsupervised: %q after %d attempts", st.Message, st.Attempts)
		}
		marker := filepath.Join(t.TempDir(), "ran")
		id = c.submit("--supervise", job, "once", marker)
		if st := c.waitState(id, dispatcher.Finished); st.Attempts != 2 {
			t.Fatalf("supervised: finished after %d attempts, want 2 (failed once, relaunched)", st.Attempts)
		}
	})
	t.Run("kill queued and running", func(t *testing.T) {
		running := c.submit(job, "sleep")
		c.waitState(running, dispatcher.Running)
		queued := c.submit(job, "sleep") // --max-drivers 1
		if st := c.status(queued); st.DriverState != dispatcher.Queued {
			t.Fatalf("second driver %s, want QUEUED", st.DriverState)
		}
		out, _, code := c.flint("kill", "--master", "mesos://"+c.disp, queued)
		if code != 0 || out != queued+" killed before it was launched\n" || c.status(queued).DriverState != dispatcher.Killed {
			t.Fatalf("kill queued: exit %d %q", code, out)
		}
		out, _, code = c.flint("kill", "--master", "mesos://"+c.disp, running)
		if code != 0 || out != "Kill request for "+running+" submitted\n" {
			t.Fatalf("kill running: exit %d %q", code, out)
		}
		if st := c.waitState(running, dispatcher.Killed); st.Message != "killed by request" {
			t.Fatalf("killed running: %q", st.Message)
		}
		if _, errOut, code := c.flint("kill", "--master", "mesos://"+c.disp, running); code != 1 || !strings.Contains(errOut, "already ended") {
			t.Fatalf("second kill: exit %d %s", code, errOut)
		}
	})
}

// TestClusterModeDispatcherRestart: the dispatcher killed (SIGKILL) with one
// driver running and one queued comes back on the same store: the running
// one is still its first attempt (reconciled, not launched again), the queued
// one still waits and runs once the first is gone.
func TestClusterModeDispatcherRestart(t *testing.T) {
	testDispatcherRestart(t, startCluster(t, "--max-drivers", "1"))
}

// TestClusterModeDispatcherRestartZK is the restart with the records in a
// real ZooKeeper (--zk): none is on the local store.
func TestClusterModeDispatcherRestartZK(t *testing.T) {
	zk := zktest.Start(t)
	c := startCluster(t, "--max-drivers", "1", "--zk", "zk://"+zk+"/flint/test")
	testDispatcherRestart(t, c)
	if recs, _ := filepath.Glob(filepath.Join(c.store, "records", "drivers", "*")); len(recs) != 0 {
		t.Fatalf("records on the local store: %v", recs)
	}
}

// waitLeading waits until the dispatcher answers as the leader: under
// ZooKeeper a dispatcher is a standby until it wins the election (after a
// killed leader, when that leader's session expires).
func (c *clusterEnv) waitLeading() {
	c.t.Helper()
	if !waitfor.Poll(60*time.Second, func() bool {
		_, err := c.client().List(context.Background())
		return err == nil
	}) {
		c.t.Fatalf("the dispatcher does not lead\nstderr:\n%s", c.errOut.String())
	}
}

func testDispatcherRestart(t *testing.T, c *clusterEnv) {
	c.waitLeading()
	job := testDriver(t)
	running := c.submit(job, "sleep")
	first := c.waitState(running, dispatcher.Running)
	queued := c.submit(job, "sleep")
	// The page links the running driver's UI (its framework's webui_url).
	if !waitfor.Poll(30*time.Second, func() bool {
		page, _, _ := c.get("/?token=" + c.client().Token)
		return strings.Contains(page, `">driver UI</a>`)
	}) {
		page, _, _ := c.get("/?token=" + c.client().Token)
		t.Fatalf("the page links no driver UI:\n%s", page)
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
	c.startDispatcher()
	c.waitLeading()
	st := c.status(running)
	if st.DriverState != dispatcher.Running || st.TaskID != first.TaskID || st.Attempts != 1 {
		t.Fatalf("after the restart the running driver is %s task %s attempts %d, want RUNNING %s 1", st.DriverState, st.TaskID, st.Attempts, first.TaskID)
	}
	if st := c.status(queued); st.DriverState != dispatcher.Queued {
		t.Fatalf("after the restart the queued driver is %s", st.DriverState)
	}
	if _, err := c.client().Kill(context.Background(), running); err != nil {
		t.Fatal(err)
	}
	c.waitState(running, dispatcher.Killed)
	st = c.waitState(queued, dispatcher.Running)
	if st.Attempts != 1 {
		t.Fatalf("queued driver attempts %d", st.Attempts)
	}
	if _, err := c.client().Kill(context.Background(), queued); err != nil {
		t.Fatal(err)
	}
	c.waitState(queued, dispatcher.Killed)
	if st := c.status(running); st.Attempts != 1 {
		t.Fatalf("the first driver was launched %d times", st.Attempts)
	}
}

// readmeLine is the README's sh-block line that starts with prefix, its
// comment and a trailing & dropped.
func readmeLine(t *testing.T, prefix string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
		case strings.HasPrefix(line, "```"):
			in = false
		case in && strings.HasPrefix(line, prefix):
			if i := strings.Index(line, " #"); i >= 0 {
				line = line[:i]
			}
			return shellWords(t, strings.TrimSuffix(strings.TrimSpace(line), " &"))
		}
	}
	t.Fatalf("the README has no %q line", prefix)
	return nil
}

// runReadmeClusterSubmit runs the README's cluster-mode commands as written
// — its dispatcher line (on a free port and its own store), the submit, and
// the status line with the id the submit printed — and checks the driver's
// output in its sandbox.
func runReadmeClusterSubmit(t *testing.T, submitArgs []string) {
	work := t.TempDir()
	c := &clusterEnv{t: t, master: startMesosLocalIn(t, work), home: t.TempDir(), store: t.TempDir()}
	disp := readmeLine(t, "./flint dispatcher ")
	if j := indexOf(disp, "--master"); j < 0 || !strings.HasPrefix(disp[j+1], "mesos://127.0.0.1:") {
		t.Fatalf("README dispatcher line %q", disp)
	} else {
		disp[j+1] = "mesos://" + c.master // the README's 127.0.0.1:5050 may be taken
	}
	c.cmdArgs = disp[1:]
	c.startDispatcher()
	j := indexOf(submitArgs, "--master")
	if j < 0 || submitArgs[j+1] != "mesos://127.0.0.1:7077" {
		t.Fatalf("README cluster submit %q does not name the dispatcher's default address", submitArgs)
	}
	submitArgs[j+1] = "mesos://" + c.disp
	out, errOut, code := c.flint(append([]string{"submit"}, submitArgs...)...)
	id := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(id, "driver-") {
		t.Fatalf("submit: exit %d %q\n%s", code, out, errOut)
	}
	status := readmeLine(t, "./flint status ")
	if !strings.HasPrefix(status[len(status)-1], "driver-") {
		t.Fatalf("README status line %q does not end with an id", status)
	}
	status[len(status)-1] = id
	out, errOut, code = c.flint(append(status[1:], "--master", "mesos://"+c.disp)...)
	if code != 0 || out != id+" FINISHED: Command exited with status 0\n" {
		t.Fatalf("%v: exit %d %q\n%s\ndispatcher:\n%s", status, code, out, errOut, c.errOut.String())
	}
	if stdout := c.sandboxFile(work, c.status(id).TaskID, "stdout"); !strings.Contains(stdout, "Pi is roughly 3.1") {
		t.Fatalf("driver stdout:\n%s", stdout)
	}
}

// TestSubmitFiles: --files reaches the tasks (TaskContext.File) in client
// mode, and in cluster mode the driver's working directory too, the local
// files uploaded to the dispatcher; bad --files are one clear error each.
func TestSubmitFiles(t *testing.T) {
	job := testDriver(t)
	dir, other := t.TempDir(), t.TempDir()
	a, b, dup := filepath.Join(dir, "a.txt"), filepath.Join(dir, "b.txt"), filepath.Join(other, "a.txt")
	for p, v := range map[string]string{a: "alpha", b: "beta\n", dup: "other"} {
		if err := os.WriteFile(p, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reads := func(out string, driver bool) {
		t.Helper()
		for name, v := range map[string]string{"a.txt": "alpha", "b.txt": "beta\n"} {
			want := []string{fmt.Sprintf("testdriver: task 0 read %s: %q", name, v), fmt.Sprintf("testdriver: task 1 read %s: %q", name, v)}
			if driver {
				want = append(want, fmt.Sprintf("testdriver: driver read %s: %q", name, v))
			}
			for _, w := range want {
				if !strings.Contains(out, w+"\n") {
					t.Fatalf("output lacks %q:\n%s", w, out)
				}
			}
		}
	}

	t.Run("client mode", func(t *testing.T) {
		out, errOut, code := runFlint(t, "submit", "--master", "local[2]", "--files", a+","+b, job, "files", "a.txt", "b.txt")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		reads(out, false)
	})

	work := t.TempDir()
	c := &clusterEnv{t: t, master: startMesosLocalIn(t, work), home: t.TempDir(), store: t.TempDir()}
	c.startDispatcher()
	t.Run("cluster mode", func(t *testing.T) {
		id := c.submit("--files", a+","+b, job, "files", "a.txt", "b.txt")
		st := c.waitState(id, dispatcher.Finished)
		reads(c.sandboxFile(work, st.TaskID, "stdout"), true)
	})
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{"--files", filepath.Join(dir, "nope.txt")}, "nope.txt: no such file or directory"},
		{"a directory", []string{"--files", dir}, "not a regular file"},
		{"both ways", []string{"--files", a, "--conf", "flint.files=" + b}, "give files with --files or with --conf flint.files, not both"},
		{"two files of one name", []string{"--files", a + "," + dup}, `files[1].name "a.txt": the sandbox already has a file of that name`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"submit", "--deploy-mode", "cluster", "--master", c.url()}, tc.args...), job, "files", "a.txt")
			out, errOut, code := c.flint(args...)
			if code == 0 || out != "" || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant a failure saying %q", code, out, errOut, tc.want)
			}
		})
	}
}
