package webui

import (
	"cmp"
	"context"
	"net/http"
	"time"

	"github.com/flint-mesos/flint/framework/uistore"
)

// Source hands out the applications to show.
type Source interface {
	// Apps lists the application ids, newest first.
	Apps() []string
	// Store returns an application's state; ok is false for an unknown id.
	Store(appID string) (s *uistore.Store, ok bool)
}

// Single is the Source of a driver: one application.
type Single struct{ S *uistore.Store }

// Apps implements Source.
func (s Single) Apps() []string { return []string{s.S.App().ID} }

// Store implements Source.
func (s Single) Store(id string) (*uistore.Store, bool) {
	if id != s.S.App().ID {
		return nil, false
	}
	return s.S, true
}

// Explanation is why a pending task is not running yet.
type Explanation struct {
	Reason, Detail string
	// Slots, with ReasonSlotsBusy, is how many tasks the executors run at
	// once.
	Slots int
}

// ReasonSlotsBusy is the Reason of a task that only waits for a slot:
// every executor's cores are taken by running tasks. A stage page
// summarises such tasks in one line.
const ReasonSlotsBusy = "SLOTS_BUSY"

// Sandbox is where an executor's sandbox lives: the agent's base URL
// (serving Mesos' /files/read) and the sandbox directory on it.
type Sandbox struct {
	AgentURL, Dir string
}

// Options configure Handler.
type Options struct {
	// Token guards every request; empty serves everyone (flint.ui.auth=false).
	Token string
	// Explain says why a pending task of a stage is not placed (nil in the
	// history server, where nothing is pending any more).
	Explain func(stageID, index int) (Explanation, error)
	// Sandbox locates an executor's Mesos sandbox for its stdout/stderr
	// pages (nil where executors have no sandbox: local mode, history).
	Sandbox func(ctx context.Context, executorID string) (Sandbox, error)
	// Metrics serves /metrics when set.
	Metrics http.Handler
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Refresh is how often live pages reload themselves (default 2 s); a
	// page of a completed application never does.
	Refresh time.Duration
	// Title names the server in page headers ("Flint" by default;
	// "Flint history" for the history server).
	Title string
	// Client fetches sandbox files from agents (default http.DefaultClient).
	Client *http.Client
	// History lists every application on / instead of redirecting to the
	// only one's jobs, and serves each under /history/<app-id>/.
	History bool
}

type server struct {
	src Source
	o   Options
}

// Handler returns the UI's handler: REST under /api/v1, pages, /metrics.
func Handler(src Source, o Options) http.Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Refresh <= 0 {
		o.Refresh = 2 * time.Second
	}
	o.Title = cmp.Or(o.Title, "Flint")
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	s := &server{src: src, o: o}
	mux := http.NewServeMux()
	s.routeAPI(mux)
	s.routePages(mux)
	if o.Metrics != nil {
		mux.Handle("GET /metrics", o.Metrics)
	}
	return authorize(o.Token, mux)
}
