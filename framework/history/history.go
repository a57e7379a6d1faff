package history

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/flint-mesos/flint/framework/eventlog"
	"github.com/flint-mesos/flint/framework/uistore"
	"github.com/flint-mesos/flint/framework/webui"
)

// Dir serves the event logs under one directory.
type Dir struct {
	dir  string
	mu   sync.Mutex
	apps map[string]*app
}

type app struct {
	sig      string // the files' names, sizes and times when last read
	store    *uistore.Store
	warnings []string
}

var (
	_ webui.Source = (*Dir)(nil)
	_ webui.Warner = (*Dir)(nil)
)

// New returns the history of the logs in dir.
func New(dir string) *Dir { return &Dir{dir: dir, apps: map[string]*app{}} }

// Apps implements webui.Source: the applications, newest first.
func (d *Dir) Apps() []string {
	ids, err := eventlog.Apps(d.dir)
	if err != nil {
		return nil
	}
	type started struct {
		id string
		at int64
	}
	var out []started
	for _, id := range ids {
		if a := d.load(id); a != nil {
			out = append(out, started{id, a.store.App().Start.UnixNano()})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].at > out[j].at })
	res := make([]string, len(out))
	for i, s := range out {
		res[i] = s.id
	}
	return res
}

// Store implements webui.Source.
func (d *Dir) Store(id string) (*uistore.Store, bool) {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return nil, false
	}
	a := d.load(id)
	if a == nil {
		return nil, false
	}
	return a.store, true
}

// Warnings implements webui.Warner.
func (d *Dir) Warnings(id string) []string {
	a := d.load(id)
	if a == nil {
		return nil
	}
	return append([]string(nil), a.warnings...)
}

// load returns an application's state, replaying its log again when its
// files changed since the last read.
func (d *Dir) load(id string) *app {
	appDir := eventlog.AppDir(d.dir, id)
	files, err := eventlog.Files(appDir)
	if err != nil || len(files) == 0 {
		return nil
	}
	var sig strings.Builder
	for _, f := range files {
		fmt.Fprintf(&sig, "%s:%d:%d;", f.Path, f.Size, f.Mod)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if a := d.apps[id]; a != nil && a.sig == sig.String() {
		return a
	}
	st := uistore.New(uistore.Limits{})
	rep, err := eventlog.Replay(appDir, st)
	a := &app{sig: sig.String(), store: st, warnings: rep.Warnings}
	if err != nil {
		a.warnings = append(a.warnings, err.Error())
	}
	if st.App().ID == "" {
		return nil // not even the application's first event: nothing to show
	}
	switch {
	case rep.CutOff && !st.App().Completed:
		a.warnings = append([]string{fmt.Sprintf("The event log of %s ends in the middle of an event: its driver is still writing it, or stopped while writing it. It is shown up to there (%d events read).", id, rep.Events)}, a.warnings...)
	case len(a.warnings) > 0:
		a.warnings = append([]string{fmt.Sprintf("The event log of %s is damaged; this application is shown up to the damage (%d events read).", id, rep.Events)}, a.warnings...)
	}
	d.apps[id] = a
	return a
}
