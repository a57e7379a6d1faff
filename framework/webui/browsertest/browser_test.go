package browsertest

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/framework"
	_ "github.com/flint-mesos/flint/framework/local"
	"github.com/flint-mesos/flint/framework/uistore"
	"github.com/flint-mesos/flint/framework/webui"
	"github.com/flint-mesos/flint/internal/driverseam"
)

var screenshots = flag.String("screenshots", "", "write screenshots of the jobs and stage pages to this directory (docs/)")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const secret = "browser-test-secret-0123456789"

var (
	release = make(chan struct{})
	square  = framework.Register("browser.square", func(_ context.Context, x int) (int, error) { return x * x, nil })
	cursed  = framework.Register("browser.cursed", func(_ context.Context, x int) (int, error) {
		return 0, fmt.Errorf("input %d is cursed", x)
	})
	wait = framework.Register("browser.wait", func(ctx context.Context, x int) (int, error) {
		select {
		case <-release:
			return x, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	})
)

// chromium finds Debian's Chromium; the tests fail without it (.ci/run
// installs it).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no Chromium on PATH: install Debian's chromium package (apt-get install -y chromium), as .ci/run does")
	return ""
}

func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1280, 800), chromedp.Flag("headless", "new"))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

// eval evaluates a JavaScript expression in the page, bounded in time.
func eval[T any](ctx context.Context, t *testing.T, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

func tasks(t *testing.T, f framework.Func[int, int], n int) []framework.Task {
	out := make([]framework.Task, n)
	for i := range out {
		task, err := f.Task(i)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = task
	}
	return out
}

// waitFor waits until the UI store satisfies cond.
func waitFor(t *testing.T, st *uistore.Store, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		ch := st.Changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// text is the rendered text of the first element sel matches ("" when none).
func text(ctx context.Context, t *testing.T, sel string) string {
	t.Helper()
	q, _ := json.Marshal(sel)
	return strings.TrimSpace(eval[string](ctx, t, fmt.Sprintf("(document.querySelector(%s) || {innerText: ''}).innerText", q)))
}

// count is how many elements sel matches.
func count(ctx context.Context, t *testing.T, sel string) int {
	t.Helper()
	q, _ := json.Marshal(sel)
	return eval[int](ctx, t, fmt.Sprintf("document.querySelectorAll(%s).length", q))
}

func navigate(ctx context.Context, t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("main"))); err != nil {
		t.Fatalf("load %s: %v", url, err)
	}
}

func shoot(ctx context.Context, t *testing.T, name string) {
	if *screenshots == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*screenshots, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBrowserShowsARunningApplication(t *testing.T) {
	cfg := framework.NewConfig()
	for k, v := range map[string]string{"flint.master": "local[2]", "flint.ui.port": "0", "flint.app.name": "browser-demo",
		"flint.authenticate.secret": secret, "flint.task.maxFailures": "1", "flint.locality.wait": "0"} {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Stop(context.Background())
	st := driverseam.Of(fc).UIStore
	if _, err := fc.RunJob(context.Background(), &framework.Job{Name: "squares", Tasks: tasks(t, square, 8)}); err != nil {
		t.Fatal(err)
	}
	if _, err := fc.RunJob(context.Background(), &framework.Job{Name: "cursed", Tasks: tasks(t, cursed, 1)}); err == nil {
		t.Fatal("the cursed job succeeded")
	}
	running := make(chan error, 1)
	go func() {
		_, err := fc.RunJob(context.Background(), &framework.Job{Name: "waiting", Tasks: tasks(t, wait, 5)})
		running <- err
	}()
	waitFor(t, st, "2 running tasks of job 2", func() bool {
		j, err := st.Job(2)
		return err == nil && j.NumActiveTasks == 2
	})

	ctx := browser(t)
	base := fc.UIURL()
	// The sign-in link sets the cookie and lands on the jobs page.
	navigate(ctx, t, base+"/?token="+webui.TokenFor(secret))
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || !strings.HasSuffix(loc, "/jobs/") {
		t.Fatalf("after sign-in at %q (%v), want the jobs page", loc, err)
	}
	if n := count(ctx, t, "#jobs tbody tr[data-job]"); n != 3 {
		t.Fatalf("%d job rows, want 3", n)
	}
	for job, want := range map[int]string{0: "SUCCEEDED", 1: "FAILED", 2: "RUNNING"} {
		if got := text(ctx, t, fmt.Sprintf(`#jobs tr[data-job="%d"] td.status`, job)); got != want {
			t.Errorf("job %d status %q, want %q", job, got, want)
		}
	}
	if got := text(ctx, t, `#jobs tr[data-job="0"] .bar label`); got != "8/8" {
		t.Errorf("job 0 progress %q, want 8/8", got)
	}
	if got := text(ctx, t, `#jobs tr[data-job="1"] .err`); !strings.Contains(got, "input 0 is cursed") {
		t.Errorf("job 1 failure %q", got)
	}
	if count(ctx, t, `meta[http-equiv="refresh"]`) != 1 {
		t.Error("the live jobs page does not refresh itself")
	}
	if count(ctx, t, `link[rel="stylesheet"], script[src], img[src^="http"]`) != 0 {
		t.Error("the page loads external assets")
	}
	shoot(ctx, t, "ui-jobs.png")

	// The job page draws its DAG.
	navigate(ctx, t, base+"/jobs/job/?id=0")
	if n := count(ctx, t, `svg.dag g.stage-node`); n != 1 {
		t.Errorf("job 0 DAG has %d stages, want 1", n)
	}

	// The running stage: tasks with executor and host, pending tasks explained.
	stage := 2
	navigate(ctx, t, fmt.Sprintf("%s/stages/stage/?id=%d&attempt=0", base, stage))
	if n := count(ctx, t, `#tasks tbody tr[data-task]`); n != 2 {
		t.Errorf("%d task rows in the running stage, want 2", n)
	}
	if got := text(ctx, t, `#tasks tbody tr[data-task] td.status`); got != "RUNNING" {
		t.Errorf("running task status %q", got)
	}
	// three tasks wait for the two busy slots: one line, not a row each
	if got := text(ctx, t, `#pending-summary`); got != "every slot busy, 3 tasks waiting, 2 slots" {
		t.Errorf("pending summary %q", got)
	}
	if n := count(ctx, t, `#pending tbody tr[data-index]`); n != 0 {
		t.Errorf("%d pending rows beside the summary, want none", n)
	}
	if got := text(ctx, t, `#tasks tbody tr[data-task] td:nth-child(6)`); got != "localhost" {
		t.Errorf("task host %q", got)
	}
	shoot(ctx, t, "ui-stage.png")

	// The failed stage shows its task's error.
	navigate(ctx, t, base+"/stages/stage/?id=1&attempt=0")
	if got := text(ctx, t, `#tasks tbody tr[data-task] td.status`); got != "FAILED" {
		t.Errorf("failed task status %q", got)
	}
	if got := text(ctx, t, `#tasks tbody tr[data-task] .err`); !strings.Contains(got, "input 0 is cursed") {
		t.Errorf("failed task error %q", got)
	}

	navigate(ctx, t, base+"/stages/")
	if n := count(ctx, t, `#stages tbody tr[data-stage]`); n != 3 {
		t.Errorf("%d stage rows, want 3", n)
	}
	shoot(ctx, t, "ui-stages.png")

	navigate(ctx, t, base+"/executors/")
	if got := text(ctx, t, `#executors tr[data-executor="driver"] td:nth-child(4)`); got != "2" {
		t.Errorf("executor cores %q, want 2", got)
	}
	if got := text(ctx, t, `#executors tr[data-executor="driver"] td:nth-child(7)`); got != "8" {
		t.Errorf("executor completed tasks %q, want 8", got)
	}

	navigate(ctx, t, base+"/environment/")
	if got := text(ctx, t, `#properties`); !strings.Contains(got, "flint.authenticate.secret") || strings.Contains(got, secret) ||
		!strings.Contains(got, "*****") || !strings.Contains(got, "browser-demo") {
		t.Errorf("environment properties:\n%s", got)
	}

	// The live jobs page refreshes itself: mark this document, let the job
	// finish, and wait for a new document (no mark) that shows it done.
	navigate(ctx, t, base+"/jobs/")
	eval[bool](ctx, t, "window.flintMark = true")
	close(release)
	if err := <-running; err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		ok, err := chromedp.Run(pctx, chromedp.Poll[bool](`window.flintMark === undefined && (document.querySelector('#jobs tr[data-job="2"] td.status') || {}).innerText === 'SUCCEEDED'`,
			chromedp.WithPollingInterval(100*time.Millisecond)))
		cancel()
		if err == nil && ok {
			break
		}
		// A reload in the middle of a poll ends it: poll the new document.
		if time.Now().After(deadline) {
			t.Fatalf("the jobs page did not refresh itself to show job 2 done (last: %v)", err)
		}
	}
}
