package progress

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// StageStatus is a snapshot of one active stage.
type StageStatus struct {
	StageID                             int
	Name                                string
	NumTasks, Active, Completed, Failed int
	Submitted                           time.Time
	// Ended marks a stage that will run no more tasks (its job finished or
	// failed); a Source reports it once more with its final counts.
	Ended bool
	// Succeeded, with Ended: the stage attempt completed (every partition's
	// output is in, some perhaps computed by an earlier attempt).
	Succeeded bool
}

// Source returns the active (submitted, unfinished) stages, and may return an ended stage
// (Ended set) with its final counts. A stage that the Source stops returning, that is Ended,
// or whose Completed reaches NumTasks, has finished.
type Source func() []StageStatus

// Options configure a Bar. Zero fields take the defaults shown.
type Options struct {
	Terminal      bool          // redraw one line with \r; otherwise print plain lines
	Width         int           // terminal width; 0: COLUMNS, the terminal's size, or 80
	Interval      time.Duration // how often the Source is polled (200ms)
	FirstDelay    time.Duration // stages younger than this are not shown (500ms)
	PlainInterval time.Duration // least time between two batches of plain lines (5s)
	Now           func() time.Time
	// Ticks, when set, drives the refreshes instead of a ticker of Interval (for tests).
	Ticks <-chan time.Time
}

// keepAlive is how long a terminal bar may stay unchanged before it is redrawn anyway, so that
// idle ssh sessions are not closed (as in Spark).
const keepAlive = time.Minute

// maxStages is how many stages a terminal bar shows side by side.
const maxStages = 3

// Bar is a console progress bar of running stages, like Spark's ConsoleProgressBar.
type Bar struct {
	out  io.Writer
	src  Source
	opts Options

	mu        sync.Mutex
	last      string              // terminal: the bar on screen ("" when cleared)
	lastDraw  time.Time           // terminal: when it was drawn
	tracked   map[int]StageStatus // stages shown so far, with their last known status
	printed   map[int]StageStatus // plain: status of each stage when last printed
	lastPlain time.Time           // plain: when lines were last printed
	onRefresh func()              // test hook, called after each tick's refresh
	endsOnly  bool                // plain: this refresh prints ended stages only (FinishAll)
	started   bool
	stopped   bool
	stop      chan struct{}
	done      chan struct{}
}

// New returns a Bar writing to out and polling src. Call Start to begin.
func New(out io.Writer, src Source, opts Options) *Bar {
	if opts.Interval <= 0 {
		opts.Interval = 200 * time.Millisecond
	}
	if opts.FirstDelay <= 0 {
		opts.FirstDelay = 500 * time.Millisecond
	}
	if opts.PlainInterval <= 0 {
		opts.PlainInterval = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Bar{out: out, src: src, opts: opts, tracked: map[int]StageStatus{}, printed: map[int]StageStatus{},
		stop: make(chan struct{}), done: make(chan struct{})}
}

// IsTerminal reports whether w is a terminal, for Options.Terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// TerminalWidth returns the width to draw in: the COLUMNS environment variable, else the size
// of the terminal out writes to, else 80.
func TerminalWidth(out io.Writer) int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if f, ok := out.(interface{ Fd() uintptr }); ok {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 80
}

// Start begins polling in a goroutine. Calling it again, or after Stop, does nothing.
func (b *Bar) Start() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started || b.stopped {
		return
	}
	b.started = true
	ticks := b.opts.Ticks
	var ticker *time.Ticker
	if ticks == nil {
		ticker = time.NewTicker(b.opts.Interval)
		ticks = ticker.C
	}
	go b.loop(ticks, ticker)
}

func (b *Bar) loop(ticks <-chan time.Time, ticker *time.Ticker) {
	defer close(b.done)
	if ticker != nil {
		defer ticker.Stop()
	}
	for {
		select {
		case <-b.stop:
			return
		case <-ticks:
			b.refresh(false)
			if b.onRefresh != nil {
				b.onRefresh()
			}
		}
	}
}

// Stop ends polling and waits for the goroutine. A terminal bar's line is cleared; plain mode
// prints what changed since the last lines, including stages that finished. Stop is idempotent.
func (b *Bar) Stop() {
	b.mu.Lock()
	if b.stopped {
		b.mu.Unlock()
		return
	}
	b.stopped = true
	started := b.started
	b.mu.Unlock()
	if !started {
		return
	}
	close(b.stop)
	<-b.done
	if b.opts.Terminal {
		b.mu.Lock()
		b.clear()
		b.mu.Unlock()
		return
	}
	b.refresh(true)
}

// refresh polls the Source once and updates the output; force (plain mode) ignores
// PlainInterval.
func (b *Bar) refresh(force bool) {
	now := b.opts.Now()
	stages := b.src()
	b.mu.Lock()
	defer b.mu.Unlock()
	ended, visible := b.classify(now, stages)
	if b.opts.Terminal {
		b.drawTerminal(now, ended, visible)
		return
	}
	b.printPlain(now, ended, visible, force)
}

// classify updates the tracked stages: it returns those that finished since the last refresh
// (with their final known status) and those to show now, by stage ID.
func (b *Bar) classify(now time.Time, stages []StageStatus) (ended, visible []StageStatus) {
	current := make(map[int]StageStatus, len(stages))
	for _, s := range stages {
		current[s.StageID] = s
	}
	for id, last := range b.tracked {
		s, ok := current[id]
		if ok && !done(s) {
			continue
		}
		if ok {
			last = s
		}
		ended = append(ended, last)
		delete(b.tracked, id)
	}
	for _, s := range stages {
		if done(s) || now.Sub(s.Submitted) <= b.opts.FirstDelay {
			continue
		}
		b.tracked[s.StageID] = s
		visible = append(visible, s)
	}
	byID := func(v []StageStatus) {
		sort.Slice(v, func(i, j int) bool { return v[i].StageID < v[j].StageID })
	}
	byID(ended)
	byID(visible)
	return ended, visible
}

func finished(s StageStatus) bool {
	return s.NumTasks > 0 && s.Completed >= s.NumTasks
}

// done: the stage runs no more tasks (all completed, or it ended).
func done(s StageStatus) bool { return s.Ended || finished(s) }

func (b *Bar) width() int {
	if b.opts.Width > 0 {
		return b.opts.Width
	}
	return TerminalWidth(b.out)
}

func (b *Bar) drawTerminal(now time.Time, ended, visible []StageStatus) {
	if len(ended) > 0 {
		b.clear()
	}
	if len(visible) == 0 {
		return
	}
	bar := Render(visible, b.width())
	if bar != b.last || now.Sub(b.lastDraw) > keepAlive {
		fmt.Fprint(b.out, "\r"+bar+"\r")
		b.lastDraw = now
	}
	b.last = bar
}

// clear blanks the terminal line if a bar is on it. Callers hold b.mu.
func (b *Bar) clear() {
	if b.last == "" {
		return
	}
	fmt.Fprint(b.out, "\r"+strings.Repeat(" ", b.width())+"\r")
	b.last = ""
}

func (b *Bar) printPlain(now time.Time, ended, visible []StageStatus, force bool) {
	for _, s := range ended {
		fmt.Fprintln(b.out, PlainFinal(s))
		delete(b.printed, s.StageID)
	}
	if b.endsOnly {
		return
	}
	if !force && !b.lastPlain.IsZero() && now.Sub(b.lastPlain) < b.opts.PlainInterval {
		return
	}
	wrote := false
	for _, s := range visible {
		if p, ok := b.printed[s.StageID]; ok && sameCounts(p, s) {
			continue
		}
		fmt.Fprintln(b.out, PlainLine(s))
		b.printed[s.StageID] = s
		wrote = true
	}
	if wrote {
		b.lastPlain = now
	}
}

func sameCounts(a, b StageStatus) bool {
	return a.NumTasks == b.NumTasks && a.Active == b.Active && a.Completed == b.Completed && a.Failed == b.Failed
}

func stageLabel(s StageStatus) string {
	if s.Name == "" {
		return fmt.Sprintf("Stage %d", s.StageID)
	}
	return fmt.Sprintf("Stage %d (%s)", s.StageID, s.Name)
}

// PlainLine is the line plain mode prints for a running stage, e.g.
// "Stage 0: 45/100 tasks done, 8 running, 0 failed".
func PlainLine(s StageStatus) string {
	return fmt.Sprintf("%s: %d/%d tasks done, %d running, %d failed", stageLabel(s), s.Completed, s.NumTasks, s.Active, s.Failed)
}

// PlainFinal is the line plain mode prints once when a stage finishes, e.g.
// "Stage 0: finished, 100/100 tasks done, 0 failed". A stage that succeeded is finished with
// every task done (some partitions may have been computed by an earlier attempt of the stage);
// one that ended otherwise (failed, cancelled), or vanished from the Source unreported, is
// "ended" with its last known counts.
func PlainFinal(s StageStatus) string {
	verb, completed := "finished", s.Completed
	switch {
	case s.Succeeded:
		completed = s.NumTasks
	case !finished(s):
		verb = "ended"
	}
	return fmt.Sprintf("%s: %s, %d/%d tasks done, %d failed", stageLabel(s), verb, completed, s.NumTasks, s.Failed)
}

// Render draws up to three stages side by side in width columns, each in Spark's form
// "[Stage 0:=====>      (45 + 8) / 100]" (completed + active / total). Each stage gets
// width/n columns; when that is too narrow for a bar, only the header and counts are drawn.
func Render(stages []StageStatus, width int) string {
	if len(stages) == 0 {
		return ""
	}
	if len(stages) > maxStages {
		stages = stages[:maxStages]
	}
	per := width / len(stages)
	var b strings.Builder
	for _, s := range stages {
		header := fmt.Sprintf("[Stage %d:", s.StageID)
		tailer := fmt.Sprintf("(%d + %d) / %d]", s.Completed, s.Active, s.NumTasks)
		b.WriteString(header)
		if w := per - len(header) - len(tailer); w > 0 {
			done := 0
			if s.NumTasks > 0 {
				done = w * min(max(s.Completed, 0), s.NumTasks) / s.NumTasks
			}
			b.WriteString(strings.Repeat("=", done))
			if done < w {
				b.WriteString(">")
				b.WriteString(strings.Repeat(" ", w-done-1))
			}
		}
		b.WriteString(tailer)
	}
	return b.String()
}

// Writer returns a writer for output that shares the terminal with the bar (logs): each write
// first clears the bar's line, and the bar is redrawn at the next refresh, so log lines never
// interleave with a half-drawn bar. In plain mode it writes through unchanged.
func (b *Bar) Writer(w io.Writer) io.Writer { return &sharedWriter{b: b, w: w} }

type sharedWriter struct {
	b *Bar
	w io.Writer
}

func (s *sharedWriter) Write(p []byte) (int, error) {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	if s.b.opts.Terminal {
		s.b.clear()
	}
	return s.w.Write(p)
}

// FinishAll clears a terminal bar at once (Spark's finishAll): the driver
// calls it when a job ends, so what the program prints next starts on a
// clean line instead of over the bar. A stage still running reappears at
// the next refresh. In plain mode it prints the final lines of the stages
// that ended, at once, before the driver's line for the job's end.
func (b *Bar) FinishAll() {
	b.mu.Lock()
	if b.opts.Terminal {
		b.clear()
		b.mu.Unlock()
		return
	}
	running := b.started && !b.stopped
	b.mu.Unlock()
	if running {
		b.refreshEnds()
	}
}

// refreshEnds prints, in plain mode, the final lines of the stages that
// ended since the last refresh: the driver calls FinishAll before it
// reports the job's end, so the lines come in the order things happened.
func (b *Bar) refreshEnds() {
	now := b.opts.Now()
	stages := b.src()
	b.mu.Lock()
	defer b.mu.Unlock()
	ended, _ := b.classify(now, stages)
	b.endsOnly = true
	b.printPlain(now, ended, nil, false)
	b.endsOnly = false
}
