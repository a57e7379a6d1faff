package framework

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/drivermetrics"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/framework/eventlog"
	"github.com/flint-mesos/flint/framework/placement"
	"github.com/flint-mesos/flint/framework/uistore"
	"github.com/flint-mesos/flint/framework/webui"
)

// uiPortRetries is how many ports after flint.ui.port are tried (Spark's
// spark.port.maxRetries) before any free port is taken.
const uiPortRetries = 16

// opView is the operator's view of a Context: its application id, the
// UI's state store and server, the event log. Everything is optional.
type opView struct {
	appID     string
	store     *uistore.Store
	srv       *http.Server
	served    chan struct{}
	url       string
	signIn    string // file holding the sign-in link, removed at Stop
	setWebURL bool   // flint.mesos.driver.webui.url was set by us
	elog      *eventlog.Writer
	backendUp atomic.Bool
	now       func() time.Time
}

// NewAppID returns an application id in Spark's style: app-<UTC
// timestamp>-<random>.
func NewAppID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return "app-" + now.UTC().Format("20060102150405") + "-" + hex.EncodeToString(b[:])
}

// AppID is the application's id: it names the event log and the UI's
// /api/v1/applications/<app-id>.
func (c *Context) AppID() string { return c.op.appID }

// UIURL is the web UI's URL, "" when flint.ui.enabled is false.
func (c *Context) UIURL() string { return c.op.url }

// startOpView starts the UI (before the backend, so that Mesos learns its
// URL) and posts the application's first events.
func (c *Context) startOpView(clock func() time.Time) error {
	now := clock()
	c.op.now, c.op.appID = clock, c.cfg.String("flint.app.id")
	if c.op.appID == "" {
		c.op.appID = NewAppID(now)
	}
	if c.cfg.Bool("flint.eventLog.enabled") {
		w, err := eventlog.Create(c.cfg.String("flint.eventLog.dir"), c.op.appID, eventlog.Options{
			Compress: c.cfg.Bool("flint.eventLog.compress"), MaxFileSize: c.cfg.Size("flint.eventLog.rolling.maxFileSize")})
		if err != nil {
			return fmt.Errorf("framework: flint.eventLog.enabled: %w", err)
		}
		c.op.elog = w
		c.bus.AddListener(w)
		c.log.WithField("dir", w.Dir()).Infof("event log in %s", w.Dir())
	}
	if c.cfg.Bool("flint.ui.enabled") {
		c.op.store = uistore.New(uistore.Limits{Jobs: c.cfg.Int("flint.ui.retainedJobs"), Stages: c.cfg.Int("flint.ui.retainedStages"),
			Tasks: c.cfg.Int("flint.ui.retainedTasks")})
		if err := c.startUIServer(); err != nil {
			return err
		}
	}
	c.bus.Post(event.ApplicationStart{Time: now, AppID: c.op.appID, Name: c.cfg.String("flint.app.name"), User: appUser(),
		Version: Version(), Master: c.master.Raw})
	c.bus.Post(event.EnvironmentUpdate{Time: now, Properties: c.properties(), Runtime: [][2]string{
		{"goVersion", runtime.Version()}, {"os", runtime.GOOS + "/" + runtime.GOARCH}, {"numCPU", strconv.Itoa(runtime.NumCPU())}}})
	return nil
}

// Version is the Flint module version and VCS revision this binary was
// built from, as the UI and event logs report it.
func Version() string {
	v, rev := "dev", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range append([]*debug.Module{&bi.Main}, bi.Deps...) {
			if d.Path == "github.com/flint-mesos/flint" && d.Version != "" && d.Version != "(devel)" {
				v = d.Version
			}
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
	}
	if rev != "" {
		return v + " (" + rev + ")"
	}
	return v
}

func appUser() string {
	if u := os.Getenv(contract.EnvUser); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "unknown"
}

// properties is the effective configuration, secrets redacted, sorted.
func (c *Context) properties() [][2]string {
	red := c.cfg.Redacted()
	out := make([][2]string, 0, len(red))
	for k, v := range red {
		out = append(out, [2]string{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func (c *Context) startUIServer() error {
	port := c.cfg.Int("flint.ui.port")
	if port < 0 || port > 65535 {
		return fmt.Errorf("framework: flint.ui.port=%d is not a TCP port (0 to 65535; 0 picks a free one)", port)
	}
	bind := c.cfg.String("flint.driver.bindAddress")
	if bind == "" {
		bind = c.cfg.String("flint.driver.host")
	}
	lis, err := listenUI(bind, port)
	if err != nil {
		return err
	}
	token := ""
	if c.cfg.Bool("flint.ui.auth") {
		secret := c.cfg.String("flint.authenticate.secret")
		if secret == "" {
			var b [32]byte
			_, _ = rand.Read(b[:])
			secret = hex.EncodeToString(b[:])
		}
		token = webui.TokenFor(secret)
	}
	ml := drivermetrics.NewListener()
	// One queue and goroutine for the UI's two listeners: half the bus
	// traffic of two (docs/benchmarks.md).
	store := c.op.store
	c.bus.AddListener(event.ListenerFunc(func(e event.Event) {
		store.OnEvent(e)
		ml.OnEvent(e)
	}))
	metrics := drivermetrics.Handler(drivermetrics.Registry(ml, c.connMetrics, c.bus.Dropped))
	o := webui.Options{Token: token, Explain: c.explainForUI, Now: c.op.now, Metrics: metrics}
	if c.master.Kind != backend.MasterLocal {
		o.Sandbox = c.sandboxForUI
	}
	h := webui.Handler(webui.Single{S: c.op.store}, o)
	c.op.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	c.op.served = make(chan struct{})
	go func() {
		defer close(c.op.served)
		_ = c.op.srv.Serve(lis)
	}()
	c.op.url = "http://" + net.JoinHostPort(advertisedHost(c.cfg.String("flint.driver.host")), strconv.Itoa(lis.Addr().(*net.TCPAddr).Port))
	if !c.cfg.IsSet("flint.mesos.driver.webui.url") {
		c.op.setWebURL = c.cfg.Set("flint.mesos.driver.webui.url", c.op.url) == nil
	}
	c.logUIURL(token)
	return nil
}

// listenUI listens on port or, when it is taken, on one of the next
// uiPortRetries ports, and then on any free port.
func listenUI(bind string, port int) (net.Listener, error) {
	var firstErr error
	for i := 0; i <= uiPortRetries && port != 0; i++ {
		lis, err := net.Listen("tcp", net.JoinHostPort(bind, strconv.Itoa(port+i)))
		if err == nil {
			return lis, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if port+i >= 65535 {
			break
		}
	}
	lis, err := net.Listen("tcp", net.JoinHostPort(bind, "0"))
	if err != nil {
		return nil, fmt.Errorf("framework: web UI: listen on %q: %w", bind, errors.Join(firstErr, err))
	}
	return lis, nil
}

func advertisedHost(host string) string {
	if host != "" {
		return host
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}

// logUIURL logs the UI's URL once. With a token, the sign-in link (which
// holds it) goes to a file only the user can read, never to the log.
func (c *Context) logUIURL(token string) {
	fields := logrus.Fields{"url": c.op.url, "app": c.op.appID}
	if token == "" {
		c.log.WithFields(fields).Infof("web UI at %s (no token: flint.ui.auth=false)", c.op.url)
		return
	}
	path, err := writeSignIn(c.op.appID, c.op.url+"/?token="+token)
	if err != nil {
		c.log.WithFields(fields).WithError(err).Warnf("web UI at %s; cannot write its sign-in link, so only clients given the token (see docs/ui.md) get in", c.op.url)
		return
	}
	c.op.signIn = path
	c.log.WithFields(fields).Infof("web UI at %s (sign-in link with the application's token in %s)", c.op.url, path)
}

// writeSignIn writes link to <temp>/flint-ui-<uid>/<app>.url, readable by
// the user only.
func writeSignIn(appID, link string) (string, error) {
	dir := filepath.Join(os.TempDir(), "flint-ui-"+strconv.Itoa(os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, appID+".url")
	if err := os.WriteFile(path, []byte(link+"\n"), 0o600); err != nil {
		return "", err
	}
	return path, nil
}

func (c *Context) sandboxForUI(ctx context.Context, executorID string) (webui.Sandbox, error) {
	if !c.op.backendUp.Load() {
		return webui.Sandbox{}, fmt.Errorf("framework: the backend is starting")
	}
	l, ok := backend.As[backend.SandboxLocator](c.backend)
	if !ok {
		return webui.Sandbox{}, fmt.Errorf("framework: the %s backend does not say where executors' sandboxes are", c.master.Raw)
	}
	u, dir, err := l.ExecutorSandbox(ctx, executorID)
	return webui.Sandbox{AgentURL: u, Dir: dir}, err
}

func (c *Context) explainForUI(stageID, index int) (webui.Explanation, error) {
	e, filtered, busy, slots, err := c.explain(stageID, index)
	if err != nil {
		return webui.Explanation{}, err
	}
	if busy {
		return webui.Explanation{Reason: webui.ReasonSlotsBusy, Detail: fmt.Sprintf("every slot busy (%d slots): it waits for a running task to end", slots), Slots: slots}, nil
	}
	detail := e.Detail
	if offers := placement.Summary(filtered); len(offers) > 0 {
		detail += "; offers did not fit: " + strings.Join(offers, "; ")
	}
	return webui.Explanation{Reason: e.Reason.String(), Detail: detail}, nil
}

// postAppEnd posts the application's last event (before the bus closes).
func (c *Context) postAppEnd() { c.bus.Post(event.ApplicationEnd{Time: c.op.now()}) }

// stopOpView stops the UI server and closes the event log after the bus has
// delivered every event; it returns the event log's first write error.
func (c *Context) stopOpView() error {
	var err error
	if c.op.elog != nil {
		if err = c.op.elog.Close(); err != nil {
			err = fmt.Errorf("framework: event log %s: %w", c.op.elog.Dir(), err)
		}
	}
	if c.op.srv != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := c.op.srv.Shutdown(ctx); err != nil {
			_ = c.op.srv.Close()
		}
		<-c.op.served
	}
	if c.op.signIn != "" {
		_ = os.Remove(c.op.signIn)
	}
	if c.op.setWebURL {
		_ = c.cfg.Set("flint.mesos.driver.webui.url", "")
	}
	return err
}
