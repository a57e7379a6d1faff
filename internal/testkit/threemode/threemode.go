package threemode

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
)

// Mode is one way of running a case's tasks.
type Mode string

// The three modes, in the order Run runs them.
const (
	Local  Mode = "local"
	Coarse Mode = "coarse"
	Fine   Mode = "fine"
)

// All is every mode.
var All = []Mode{Local, Coarse, Fine}

// Conf is the configuration a mode's shared Context starts with (before
// the settings given to Configure): small executors, short timeouts, no
// UI and no progress bar, four attempts per task.
func Conf(m Mode) []string {
	common := []string{"flint.ui.enabled=false", "flint.ui.showConsoleProgress=false", "flint.task.maxFailures=4"}
	switch m {
	case Local:
		return append(common, "flint.master=local[2,4]")
	case Coarse, Fine:
		return append(common, "flint.master=embedded", "flint.mesos.coarse="+fmt.Sprint(m == Coarse),
			"flint.executor.memory=64m", "flint.mesos.executor.memoryOverhead=32m",
			"flint.network.timeout=10s", "flint.executor.heartbeatInterval=500ms", "flint.locality.wait=0s")
	}
	panic(fmt.Sprintf("threemode: unknown mode %q", m))
}

// shared is the test binary's Contexts, one per mode, started on first use.
var shared = struct {
	sync.Mutex
	extra   []string
	workDir string
	modes   map[Mode]*modeContext
}{modes: map[Mode]*modeContext{}}

// modeContext is one mode's Context and the log it writes.
type modeContext struct {
	fc  *framework.Context
	err error
	log *logBuffer
}

// Configure adds settings (key=value) to every mode's Context; call it
// from TestMain before Main (or from a test before the first Run).
func Configure(conf ...string) {
	shared.Lock()
	defer shared.Unlock()
	shared.extra = append(shared.extra, conf...)
}

// Main is a test binary's TestMain: an executor when an agent started it,
// else it runs the tests, stops the shared Contexts and checks for leaked
// goroutines.
func Main(m *testing.M) { MainWith(m, nil) }

// MainWith is Main with a setup run before the tests (never in an executor): it starts what
// every mode's Context shares — a server the tests reach, say — and may call Configure;
// teardown runs after the Contexts are stopped.
func MainWith(m *testing.M, setup func() (teardown func() error, err error)) {
	if os.Getenv(flint.EnvRole) != "" {
		os.Exit(flint.Execute(os.Args[0], nil, nil))
	}
	teardown := func() error { return nil }
	if setup != nil {
		td, err := setup()
		if err != nil {
			fmt.Fprintln(os.Stderr, "threemode: setup:", err)
			os.Exit(1)
		}
		if td != nil {
			teardown = td
		}
	}
	code := m.Run()
	if err := stopAll(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	if err := teardown(); err != nil {
		fmt.Fprintln(os.Stderr, "threemode: teardown:", err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Run runs fn as a subtest in every mode, named after it.
func Run(t *testing.T, fn func(t *testing.T, fc *framework.Context)) {
	t.Helper()
	RunIn(t, All, fn)
}

// RunIn runs fn as a subtest in each of modes.
func RunIn(t *testing.T, modes []Mode, fn func(t *testing.T, fc *framework.Context)) {
	t.Helper()
	for _, m := range modes {
		t.Run(string(m), func(t *testing.T) {
			mc := contextFor(t, m)
			mark := mc.log.Len()
			defer func() {
				if t.Failed() {
					t.Logf("%s driver log during this case:\n%s", m, mc.log.From(mark))
				}
			}()
			fn(t, mc.fc)
		})
	}
}

// contextFor is m's shared Context, started on first use.
func contextFor(t *testing.T, m Mode) *modeContext {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	mc := shared.modes[m]
	if mc == nil {
		mc = startMode(m)
		shared.modes[m] = mc
	}
	if mc.err != nil {
		t.Fatalf("threemode: start the %s Context: %v\n%s", m, mc.err, mc.log.From(0))
	}
	return mc
}

// startMode starts m's Context; shared is locked.
func startMode(m Mode) *modeContext {
	mc := &modeContext{log: &logBuffer{}}
	conf := Conf(m)
	if m != Local {
		if shared.workDir == "" {
			dir, err := os.MkdirTemp("", "flint-threemode-")
			if err != nil {
				mc.err = err
				return mc
			}
			shared.workDir = dir
		}
		conf = append(conf, "flint.embedded.workDir="+shared.workDir+"/"+string(m))
	}
	cfg, err := config.Load(config.LoadOptions{Conf: append(conf, shared.extra...)})
	if err != nil {
		mc.err = err
		return mc
	}
	log := logrus.New()
	log.SetOutput(mc.log)
	log.SetLevel(logrus.InfoLevel)
	mc.fc, mc.err = framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	return mc
}

// stopAll stops every started Context and removes the clusters' work
// directory.
func stopAll() error {
	shared.Lock()
	defer shared.Unlock()
	var errs []error
	for m, mc := range shared.modes {
		if mc.fc == nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if err := mc.fc.Stop(ctx); err != nil {
			errs = append(errs, fmt.Errorf("threemode: stop the %s Context: %w", m, err))
		}
		cancel()
	}
	shared.modes = map[Mode]*modeContext{}
	if shared.workDir != "" && len(errs) == 0 {
		if err := os.RemoveAll(shared.workDir); err != nil {
			errs = append(errs, err)
		}
		shared.workDir = ""
	}
	if len(errs) > 0 {
		return fmt.Errorf("%v", errs)
	}
	return nil
}

// logBuffer is a mode's driver log, kept whole so a failing case can show
// the lines written during it.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// Len is how much was written so far.
func (l *logBuffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}

// From is what was written from offset on.
func (l *logBuffer) From(off int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b.Bytes()[off:])
}

// DriverLog is what mode m's shared Context has logged so far ("" before it started): tests
// that check what a driver's log does not hold.
func DriverLog(m Mode) string {
	shared.Lock()
	mc := shared.modes[m]
	shared.Unlock()
	if mc == nil {
		return ""
	}
	return mc.log.From(0)
}

// WorkDir is the directory of mode m's embedded cluster (its agents' sandboxes: executors'
// logs and files); "" for local mode or before the cluster started.
func WorkDir(m Mode) string {
	shared.Lock()
	defer shared.Unlock()
	if m == Local || shared.workDir == "" || shared.modes[m] == nil {
		return ""
	}
	return shared.workDir + "/" + string(m)
}
