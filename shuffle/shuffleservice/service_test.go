package shuffleservice_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/tlspin"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shuffleserver"
	"github.com/flint-mesos/flint/shuffle/shuffleservice"
	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func quiet() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

func token(app string) string { return shuffleserver.Token("secret-of-"+app, app) }

func start(t *testing.T, cfg shuffleservice.Config) *shuffleservice.Service {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	cfg.Log = quiet()
	s, err := shuffleservice.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// writeOutput is what an executor of app does: it registers and commits
// map output (shuffle 1, map 0) with records in reduce partitions 0 and
// 2 in its store under the service's directory, then forgets the store
// (the executor is released; its files stay).
func writeOutput(t *testing.T, dir, app, exec, ns string) [3][]byte {
	t.Helper()
	if err := shuffleservice.Register(dir, app, token(app)); err != nil {
		t.Fatal(err)
	}
	root := shuffleservice.StoreRoot(dir, app, exec)
	if ns != "" {
		root = shuffleservice.NamespaceRoot(dir, app, exec, ns)
	}
	st, err := shuffle.OpenStore(root)
	if err != nil {
		t.Fatal(err)
	}
	w, err := shuffle.NewWriter(shuffle.Config{Store: st, ShuffleID: 1, Partitions: 3, Order: shuffle.ByteOrder, Memory: shuffle.NewMemory(1 << 20).Task()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		if err := w.Add([]int{0, 2}[i%2], []byte{byte(i), byte(i >> 8)}, bytes.Repeat([]byte(exec), i%50)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	var blocks [3][]byte
	for r := range 3 {
		b, err := st.OpenBlock(1, 0, r)
		if err != nil {
			t.Fatal(err)
		}
		blocks[r], _ = io.ReadAll(b)
		b.Close()
	}
	return blocks
}

func fetch(t *testing.T, a shuffleserver.Address, app, tok string, reduce int) ([]byte, error) {
	t.Helper()
	c := shuffleserver.NewClient(app, tok, 10*time.Second)
	defer c.Close()
	return c.Fetch(context.Background(), a, 1, 0, reduce, nil)
}

// Reducers read the blocks of an executor that no longer runs from the
// agent's service, over TLS pinned by the address executors read from the
// service's directory; a dataset run's namespace too.
func TestServesTheBlocksOfAnExecutorThatIsGone(t *testing.T) {
	dir := t.TempDir()
	svc := start(t, shuffleservice.Config{Dir: dir, TLS: true, SweepEvery: -1})
	addr, err := shuffleservice.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if addr != svc.Address() || addr.Pin == "" {
		t.Fatalf("the info file says %+v, the service listens at %+v with TLS", addr, svc.Address())
	}
	main := writeOutput(t, dir, "app-1", "exec-1", "")
	nsd := writeOutput(t, dir, "app-1", "exec-2", "run-7")
	for r := range 3 {
		a := addr
		a.Executor = "exec-1"
		got, err := fetch(t, a, "app-1", token("app-1"), r)
		if err != nil || !bytes.Equal(got, main[r]) {
			t.Errorf("exec-1 reduce %d: %d bytes, %v; want the %d bytes on disk", r, len(got), err, len(main[r]))
		}
		a.Executor, a.Namespace = "exec-2", "run-7"
		got, err = fetch(t, a, "app-1", token("app-1"), r)
		if err != nil || !bytes.Equal(got, nsd[r]) {
			t.Errorf("exec-2 namespace run-7 reduce %d: %d bytes, %v; want the %d bytes on disk", r, len(got), err, len(nsd[r]))
		}
	}
	a := addr
	a.Executor = "exec-9"
	var se *shuffleserver.StatusError
	if _, err := fetch(t, a, "app-1", token("app-1"), 0); !errors.As(err, &se) || se.Code != http.StatusNotFound {
		t.Errorf("an executor that wrote nothing: %v, want 404", err)
	}
}

// No token, a wrong one, another application's and an unregistered
// application are all refused with the same 401, before any file is
// opened.
func TestRefusesAllButTheApplicationsToken(t *testing.T) {
	dir := t.TempDir()
	svc := start(t, shuffleservice.Config{Dir: dir, SweepEvery: -1})
	writeOutput(t, dir, "app-1", "exec-1", "")
	writeOutput(t, dir, "app-2", "exec-1", "")
	a := svc.Address()
	a.Executor = "exec-1"
	for _, c := range []struct{ name, app, tok string }{
		{"no token", "app-1", ""},
		{"wrong token", "app-1", "not-the-token"},
		{"another application's token", "app-1", token("app-2")},
		{"unregistered application", "app-3", token("app-3")},
	} {
		var se *shuffleserver.StatusError
		_, err := fetch(t, a, c.app, c.tok, 0)
		if !errors.As(err, &se) || se.Code != http.StatusUnauthorized || se.Message != "unauthorized" {
			t.Errorf("%s: %v, want 401 unauthorized", c.name, err)
		}
	}
	for _, c := range []struct {
		method, path string
		code         int
	}{
		{"POST", shuffleservice.APIPrefix + "app-1/heartbeat", http.StatusUnauthorized},
		{"DELETE", shuffleservice.APIPrefix + "app-1", http.StatusUnauthorized},
		{"DELETE", shuffleservice.APIPrefix + "app-1/shuffles/1", http.StatusUnauthorized},
	} {
		if code := do(t, svc, c.method, c.path, token("app-2")); code != c.code {
			t.Errorf("%s %s with app-2's token: %d, want %d", c.method, c.path, code, c.code)
		}
	}
	if _, err := os.Stat(shuffleservice.StoreRoot(dir, "app-1", "exec-1")); err != nil {
		t.Errorf("app-1's files after refused deletions: %v", err)
	}
}

func do(t *testing.T, svc *shuffleservice.Service, method, path, tok string) int {
	t.Helper()
	req, err := http.NewRequest(method, svc.Address().BaseURL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	cl := http.DefaultClient
	if pin := svc.Address().Pin; pin != "" {
		tc, err := tlspin.Client(pin)
		if err != nil {
			t.Fatal(err)
		}
		cl = &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
	}
	resp, err := cl.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cl.CloseIdleConnections()
	return resp.StatusCode
}

// Malformed requests get one clear status each.
func TestMalformedRequests(t *testing.T) {
	dir := t.TempDir()
	svc := start(t, shuffleservice.Config{Dir: dir, SweepEvery: -1})
	writeOutput(t, dir, "app-1", "exec-1", "")
	tok := token("app-1")
	for _, c := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/shuffle/v1/app-1/1/0", http.StatusBadRequest},
		{"GET", "/shuffle/v1/app-1/1/0/x", http.StatusBadRequest},
		{"GET", "/shuffle/v1/app-1/1/0/0", http.StatusBadRequest},            // no executor
		{"GET", "/shuffle/v1/app-1/1/0/0?exec=..", http.StatusBadRequest},    // not an id
		{"GET", "/shuffle/v1/app-1/1/0/0?exec=a%2Fb", http.StatusBadRequest}, // a path
		{"POST", "/shuffle/v1/app-1/1/0/0?exec=exec-1", http.StatusMethodNotAllowed},
		{"GET", "/shuffle/v1/app-1/1/0/7?exec=exec-1", http.StatusInternalServerError}, // no such reduce partition
		{"GET", "/shuffle-service/v1/apps/app-1/heartbeat", http.StatusNotFound},
		{"DELETE", "/shuffle-service/v1/apps/app-1/shuffles/-1", http.StatusBadRequest},
		{"DELETE", "/shuffle-service/v1/apps/app-1/shuffles/1?ns=..", http.StatusBadRequest},
		{"DELETE", "/shuffle-service/v1/apps/app-1/namespaces/..", http.StatusBadRequest},
		{"DELETE", "/shuffle-service/v1/apps/app-1/namespaces/a*", http.StatusBadRequest},
		{"DELETE", "/shuffle-service/v1/apps/", http.StatusNotFound},
		{"GET", "/elsewhere", http.StatusNotFound},
	} {
		if code := do(t, svc, c.method, c.path, tok); code != c.code {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, code, c.code)
		}
	}
}

// The first registration fixes the application's token: another one is
// refused (an application id cannot be taken over), the same one is
// accepted again.
func TestRegistrationKeepsTheFirstToken(t *testing.T) {
	dir := t.TempDir()
	start(t, shuffleservice.Config{Dir: dir, SweepEvery: -1})
	if err := shuffleservice.Register(dir, "app-1", token("app-1")); err != nil {
		t.Fatal(err)
	}
	if err := shuffleservice.Register(dir, "app-1", token("app-1")); err != nil {
		t.Errorf("the same token again: %v", err)
	}
	if err := shuffleservice.Register(dir, "app-1", token("app-2")); !errors.Is(err, shuffleservice.ErrOtherToken) {
		t.Errorf("another token: %v, want ErrOtherToken", err)
	}
	st, err := os.Stat(shuffleservice.AppDir(dir, "app-1"))
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the application's directory: %v, mode %v; want 0700", err, st.Mode().Perm())
	}
	st, err = os.Stat(shuffleservice.AppsDir(dir))
	if err != nil || st.Mode()&os.ModeSticky == 0 || st.Mode().Perm() != 0o777 {
		t.Errorf("the applications' directory: %v, mode %v; want sticky 0777 (any user registers, none removes another's)", err, st.Mode())
	}
}

// Without a service, an executor is told what to run and where.
func TestNoServiceIsOneClearError(t *testing.T) {
	dir := t.TempDir()
	svc := start(t, shuffleservice.Config{Dir: dir, SweepEvery: -1})
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}
	err := shuffleservice.Register(dir, "app-1", token("app-1"))
	want := "no shuffle service runs on this agent: " + filepath.Join(dir, shuffleservice.InfoFile) + " is missing (start `flint shuffle-service --dir " + dir + "`"
	if !errors.Is(err, shuffleservice.ErrNotRunning) || !strings.Contains(err.Error(), want) {
		t.Errorf("register after the service stopped: %v\nwant it to contain %q", err, want)
	}
}

// An application not heard from for the timeout is removed by the
// sweep; a heartbeat (or any authorized request) keeps it; the driver's
// goodbye removes it at once; a released shuffle's files go from every
// executor's store (of their own ids, or of one namespace), and a released
// namespace from every store.
func TestCleanup(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	svc := start(t, shuffleservice.Config{Dir: dir, AppTimeout: 2 * time.Minute, SweepEvery: -1, Clock: clk})
	writeOutput(t, dir, "app-1", "exec-1", "")
	writeOutput(t, dir, "app-2", "exec-1", "")
	writeOutput(t, dir, "app-2", "exec-2", "run-1")
	writeOutput(t, dir, "app-2", "exec-3", "run-2")
	if got := svc.Sweep(); len(got) != 0 {
		t.Fatalf("first sweep removed %v: applications just seen start their wait", got)
	}
	clk.Advance(90 * time.Second)
	if code := do(t, svc, "POST", shuffleservice.APIPrefix+"app-2/heartbeat", token("app-2")); code != http.StatusNoContent {
		t.Fatalf("heartbeat: %d", code)
	}
	clk.Advance(time.Minute)
	if got := svc.Sweep(); strings.Join(got, " ") != "app-1" {
		t.Errorf("sweep 150 s after app-1 was seen and 60 s after app-2's heartbeat removed %v, want [app-1]", got)
	}
	if _, err := os.Stat(shuffleservice.AppDir(dir, "app-1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("app-1's directory after the sweep: %v", err)
	}
	own := filepath.Join(shuffleservice.StoreRoot(dir, "app-2", "exec-1"), "shuffle_1")
	inRun1 := filepath.Join(shuffleservice.NamespaceRoot(dir, "app-2", "exec-2", "run-1"), "shuffle_1")
	run2 := shuffleservice.NamespaceRoot(dir, "app-2", "exec-3", "run-2")
	for _, c := range []struct {
		path       string
		gone, kept []string
	}{
		{"shuffles/1", []string{own}, []string{inRun1, run2}},
		{"shuffles/1?ns=run-1", []string{inRun1}, []string{run2}},
		{"namespaces/run-2", []string{run2}, nil},
	} {
		if code := do(t, svc, "DELETE", shuffleservice.APIPrefix+"app-2/"+c.path, token("app-2")); code != http.StatusNoContent {
			t.Fatalf("DELETE %s: %d", c.path, code)
		}
		for _, d := range c.gone {
			if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s after DELETE %s: %v", d, c.path, err)
			}
		}
		for _, d := range c.kept {
			if _, err := os.Stat(d); err != nil {
				t.Errorf("%s after DELETE %s (another shuffle's): %v", d, c.path, err)
			}
		}
	}
	if code := do(t, svc, "DELETE", shuffleservice.APIPrefix+"app-2", token("app-2")); code != http.StatusNoContent {
		t.Fatalf("delete application: %d", code)
	}
	if _, err := os.Stat(shuffleservice.AppDir(dir, "app-2")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("app-2's directory after its goodbye: %v", err)
	}
}

// The sweep runs on its own on the service's clock.
func TestSweepRunsOnTheClock(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(t0)
	start(t, shuffleservice.Config{Dir: dir, AppTimeout: time.Minute, Clock: clk})
	writeOutput(t, dir, "app-1", "exec-1", "")
	gone := func() bool {
		_, err := os.Stat(shuffleservice.AppDir(dir, "app-1"))
		return errors.Is(err, os.ErrNotExist)
	}
	// The clock moves a sweep interval whenever the ticker is armed, until
	// the sweep removed app-1: a slow sweep goroutine (a tick dropped while
	// it still ran) only takes more intervals, as with a real ticker.
	waitfor.True(t, 30*time.Second, "app-1 removed by the sweep", func() bool {
		if gone() {
			return true
		}
		if clk.HasPending(15 * time.Second) {
			clk.Advance(15 * time.Second)
		}
		return false
	})
	if elapsed := clk.Now().Sub(t0); elapsed < time.Minute {
		t.Errorf("app-1 removed after %v on the service's clock, before its AppTimeout (1m)", elapsed)
	}
}
