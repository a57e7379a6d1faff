package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestRenderOneStage(t *testing.T) {
	s := StageStatus{StageID: 0, NumTasks: 100, Active: 8, Completed: 45}
	// 80 columns: 9 for "[Stage 0:", 15 for "(45 + 8) / 100]", 56 for the bar; 56*45/100 = 25.
	want := "[Stage 0:" + strings.Repeat("=", 25) + ">" + strings.Repeat(" ", 30) + "(45 + 8) / 100]"
	if got := Render([]StageStatus{s}, 80); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	golden := []struct {
		s     StageStatus
		width int
		want  string
	}{
		{s, 40, "[Stage 0:=======>        (45 + 8) / 100]"},
		{StageStatus{StageID: 3, NumTasks: 10}, 30, "[Stage 3:>       (0 + 0) / 10]"},
		{StageStatus{StageID: 1, NumTasks: 4, Completed: 4}, 24, "[Stage 1:===(4 + 0) / 4]"},
		{StageStatus{StageID: 2, NumTasks: 0}, 24, "[Stage 2:>  (0 + 0) / 0]"},
		{s, 24, "[Stage 0:(45 + 8) / 100]"},
		{s, 10, "[Stage 0:(45 + 8) / 100]"},
		{StageStatus{StageID: 5, NumTasks: 3, Completed: 9}, 22, "[Stage 5:=(9 + 0) / 3]"},
	}
	for _, g := range golden {
		if got := Render([]StageStatus{g.s}, g.width); got != g.want {
			t.Errorf("width %d: got %q, want %q", g.width, got, g.want)
		}
	}
	if Render(nil, 80) != "" {
		t.Error("no stages should render empty")
	}
}

func TestRenderThreeStages(t *testing.T) {
	stages := []StageStatus{
		{StageID: 0, NumTasks: 100, Active: 8, Completed: 45},
		{StageID: 1, NumTasks: 10, Active: 4},
		{StageID: 12, NumTasks: 200, Active: 2, Completed: 198},
		{StageID: 13, NumTasks: 1},
	}
	// 30 columns each: bars of 6, 8 and 4 columns.
	want := "[Stage 0:==>   (45 + 8) / 100]" + "[Stage 1:>       (0 + 4) / 10]" + "[Stage 12:===>(198 + 2) / 200]"
	if got := Render(stages, 90); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// 45 columns each: bars of 21, 23 and 19 columns.
	want = "[Stage 0:=========>           (45 + 8) / 100]" +
		"[Stage 1:>                      (0 + 4) / 10]" +
		"[Stage 12:==================>(198 + 2) / 200]"
	if got := Render(stages, 135); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := Render(stages, 9); got != "[Stage 0:(45 + 8) / 100][Stage 1:(0 + 4) / 10][Stage 12:(198 + 2) / 200]" {
		t.Errorf("narrow: %q", got)
	}
}

func TestPlainLines(t *testing.T) {
	s := StageStatus{StageID: 0, NumTasks: 100, Active: 8, Completed: 45}
	if got := PlainLine(s); got != "Stage 0: 45/100 tasks done, 8 running, 0 failed" {
		t.Errorf("got %q", got)
	}
	s.Name, s.Completed, s.Failed = "count at main.go:12", 100, 2
	if got := PlainFinal(s); got != "Stage 0 (count at main.go:12): finished, 100/100 tasks done, 2 failed" {
		t.Errorf("got %q", got)
	}
	s.Completed = 40
	if got := PlainFinal(s); got != "Stage 0 (count at main.go:12): ended, 40/100 tasks done, 2 failed" {
		t.Errorf("got %q", got)
	}
}

// harness drives a Bar with a fake clock, a fake ticker and a mutable stage list.
type harness struct {
	t      *testing.T
	mu     sync.Mutex
	now    time.Time
	stages []StageStatus
	ticks  chan time.Time
	done   chan struct{}
	out    bytes.Buffer
	bar    *Bar
}

func newHarness(t *testing.T, opts Options) *harness {
	h := &harness{t: t, now: time.Unix(1000, 0), ticks: make(chan time.Time), done: make(chan struct{})}
	opts.Now = func() time.Time { h.mu.Lock(); defer h.mu.Unlock(); return h.now }
	opts.Ticks = h.ticks
	h.bar = New(&h.out, func() []StageStatus {
		h.mu.Lock()
		defer h.mu.Unlock()
		return append([]StageStatus(nil), h.stages...)
	}, opts)
	h.bar.onRefresh = func() { h.done <- struct{}{} }
	h.bar.Start()
	t.Cleanup(h.bar.Stop)
	return h
}

func (h *harness) set(d time.Duration, stages ...StageStatus) {
	h.mu.Lock()
	h.now = h.now.Add(d)
	h.stages = stages
	h.mu.Unlock()
}

// tick advances the clock by d and runs one refresh, returning what it wrote.
func (h *harness) tick(d time.Duration) string {
	h.mu.Lock()
	h.now = h.now.Add(d)
	h.mu.Unlock()
	before := h.out.Len()
	h.ticks <- time.Time{}
	<-h.done
	return h.out.String()[before:]
}

func TestTerminalMode(t *testing.T) {
	h := newHarness(t, Options{Terminal: true, Width: 40})
	start := h.now
	st := StageStatus{StageID: 0, NumTasks: 100, Active: 8, Completed: 45, Submitted: start}
	h.set(0, st)
	if got := h.tick(400 * time.Millisecond); got != "" {
		t.Errorf("stage younger than FirstDelay drawn: %q", got)
	}
	want := "\r[Stage 0:=======>        (45 + 8) / 100]\r"
	if got := h.tick(200 * time.Millisecond); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := h.tick(200 * time.Millisecond); got != "" {
		t.Errorf("unchanged bar redrawn: %q", got)
	}
	if got := h.tick(61 * time.Second); got != want {
		t.Errorf("keep-alive redraw: got %q", got)
	}
	st.Completed, st.Active = 90, 10
	second := StageStatus{StageID: 1, NumTasks: 10, Active: 2, Submitted: h.now.Add(-time.Second)}
	h.set(0, second, st)
	// 20 columns each leave no room for bars.
	want = "\r[Stage 0:(90 + 10) / 100][Stage 1:(0 + 2) / 10]\r"
	if got := h.tick(200 * time.Millisecond); got != want {
		t.Errorf("two stages: got %q, want %q", got, want)
	}
	h.set(0, second)
	clear := "\r" + strings.Repeat(" ", 40) + "\r"
	want = clear + "\r[Stage 1:>                 (0 + 2) / 10]\r"
	if got := h.tick(200 * time.Millisecond); got != want {
		t.Errorf("stage finished: got %q, want %q", got, want)
	}
	second.Completed = 10
	h.set(0, second)
	if got := h.tick(200 * time.Millisecond); got != clear {
		t.Errorf("last stage finished: got %q, want %q", got, clear)
	}
	if got := h.tick(200 * time.Millisecond); got != "" {
		t.Errorf("idle: %q", got)
	}
	h.set(0, StageStatus{StageID: 2, NumTasks: 5, Submitted: start})
	h.tick(200 * time.Millisecond)
	before := h.out.Len()
	h.bar.Stop()
	h.bar.Stop()
	if got := h.out.String()[before:]; got != clear {
		t.Errorf("Stop should clear the line: %q", got)
	}
}

func TestPlainMode(t *testing.T) {
	h := newHarness(t, Options{Terminal: false, PlainInterval: 5 * time.Second})
	start := h.now
	st := StageStatus{StageID: 0, NumTasks: 100, Active: 8, Completed: 45, Submitted: start}
	short := StageStatus{StageID: 9, NumTasks: 1, Active: 1, Submitted: start.Add(300 * time.Millisecond)}
	h.set(0, st, short)
	if got := h.tick(200 * time.Millisecond); got != "" {
		t.Errorf("young stage printed: %q", got)
	}
	if got := h.tick(400 * time.Millisecond); got != "Stage 0: 45/100 tasks done, 8 running, 0 failed\n" {
		t.Errorf("first line: %q", got)
	}
	short.Completed, short.Active = 1, 0
	h.set(0, st, short)
	if got := h.tick(200 * time.Millisecond); got != "" {
		t.Errorf("short stage reported: %q", got)
	}
	st.Completed, st.Failed = 50, 1
	h.set(0, st)
	if got := h.tick(time.Second); got != "" {
		t.Errorf("printed before PlainInterval: %q", got)
	}
	if got := h.tick(5 * time.Second); got != "Stage 0: 50/100 tasks done, 8 running, 1 failed\n" {
		t.Errorf("changed line: %q", got)
	}
	if got := h.tick(10 * time.Second); got != "" {
		t.Errorf("unchanged stage printed: %q", got)
	}
	st.Completed, st.Active = 100, 0
	other := StageStatus{StageID: 1, Name: "reduce", NumTasks: 4, Active: 4, Submitted: start}
	h.set(0, other, st)
	if got := h.tick(200 * time.Millisecond); got != "Stage 0: finished, 100/100 tasks done, 1 failed\nStage 1 (reduce): 0/4 tasks done, 4 running, 0 failed\n" {
		t.Errorf("completion: %q", got)
	}
	other.Completed, other.Active = 2, 2
	h.set(0, other)
	h.tick(200 * time.Millisecond)
	h.set(0)
	before := h.out.Len()
	h.bar.Stop()
	if got := h.out.String()[before:]; got != "Stage 1 (reduce): ended, 2/4 tasks done, 0 failed\n" {
		t.Errorf("Stop: %q", got)
	}
}

// The bar's real time.Ticker drives it (in a synctest bubble, on the fake
// clock); after Stop, a thousand intervals pass without a poll.
func TestRealTickerAndIdempotentStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		polls := 0
		var out syncBuffer
		b := New(&out, func() []StageStatus {
			mu.Lock()
			defer mu.Unlock()
			polls++
			return []StageStatus{{StageID: 0, NumTasks: 2, Active: 1}}
		}, Options{Terminal: true, Width: 30, Interval: time.Millisecond, FirstDelay: time.Nanosecond})
		b.Start()
		b.Start()
		for range 1000 { // the bar's own time.Ticker, on the bubble's fake clock
			if strings.Contains(out.String(), "(0 + 1) / 2]") {
				break
			}
			<-time.After(time.Millisecond)
			synctest.Wait()
		}
		b.Stop()
		b.Stop()
		if !strings.Contains(out.String(), "[Stage 0:>") {
			t.Fatalf("bar never drawn: %q", out.String())
		}
		mu.Lock()
		n := polls
		mu.Unlock()
		<-time.After(time.Second) // a thousand intervals of fake time
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if polls != n {
			t.Errorf("polling continued after Stop")
		}
	})
}

func TestStopWithoutStart(t *testing.T) {
	var out bytes.Buffer
	b := New(&out, func() []StageStatus { t.Error("polled"); return nil }, Options{})
	b.Stop()
	b.Start()
	if out.Len() != 0 {
		t.Errorf("wrote %q", out.String())
	}
}

func TestTerminalWidth(t *testing.T) {
	t.Setenv("COLUMNS", "123")
	if got := TerminalWidth(&bytes.Buffer{}); got != 123 {
		t.Errorf("COLUMNS: %d", got)
	}
	t.Setenv("COLUMNS", "")
	if got := TerminalWidth(&bytes.Buffer{}); got != 80 {
		t.Errorf("default: %d", got)
	}
	if IsTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is no terminal")
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestWriterClearsTheBarBeforeLogOutput(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(1000, 0)
	ticks := make(chan time.Time)
	refreshed := make(chan struct{})
	src := func() []StageStatus {
		return []StageStatus{{StageID: 0, NumTasks: 10, Completed: 4, Active: 2, Submitted: now.Add(-time.Second)}}
	}
	b := New(&out, src, Options{Terminal: true, Width: 40, Now: func() time.Time { return now }, Ticks: ticks})
	b.onRefresh = func() { refreshed <- struct{}{} }
	b.Start()
	defer b.Stop()
	ticks <- now
	<-refreshed
	drawn := out.String()
	if !strings.Contains(drawn, "(4 + 2) / 10]") {
		t.Fatalf("bar not drawn: %q", drawn)
	}
	w := b.Writer(&out)
	if _, err := w.Write([]byte("log line\n")); err != nil {
		t.Fatal(err)
	}
	after := strings.TrimPrefix(out.String(), drawn)
	if !strings.HasPrefix(after, "\r"+strings.Repeat(" ", 40)+"\r") || !strings.HasSuffix(after, "log line\n") {
		t.Fatalf("log write did not clear the bar first: %q", after)
	}
	ticks <- now
	<-refreshed
	_, redrawn, _ := strings.Cut(out.String(), "log line\n")
	if !strings.Contains(redrawn, "(4 + 2) / 10]") {
		t.Fatalf("bar not redrawn after the log line: %q", out.String())
	}
}

func TestFinishAllClearsTheBarAtOnce(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(1000, 0)
	ticks := make(chan time.Time)
	refreshed := make(chan struct{})
	src := func() []StageStatus {
		return []StageStatus{{StageID: 0, NumTasks: 10, Completed: 9, Active: 1, Submitted: now.Add(-time.Second)}}
	}
	b := New(&out, src, Options{Terminal: true, Width: 40, Now: func() time.Time { return now }, Ticks: ticks})
	b.onRefresh = func() { refreshed <- struct{}{} }
	b.Start()
	defer b.Stop()
	ticks <- now
	<-refreshed
	drawn := out.String()
	b.FinishAll()
	if got := strings.TrimPrefix(out.String(), drawn); got != "\r"+strings.Repeat(" ", 40)+"\r" {
		t.Fatalf("FinishAll wrote %q, want the line cleared", got)
	}
	b.FinishAll() // nothing on screen: writes nothing
	if got := strings.TrimPrefix(out.String(), drawn); got != "\r"+strings.Repeat(" ", 40)+"\r" {
		t.Fatalf("second FinishAll wrote more: %q", got)
	}
}

func TestPlainFinalUsesTheEndedStagesFinalCounts(t *testing.T) {
	var out bytes.Buffer
	now := time.Unix(1000, 0)
	ticks := make(chan time.Time)
	refreshed := make(chan struct{})
	stages := []StageStatus{{StageID: 3, Name: "pi", NumTasks: 20, Completed: 0, Active: 2, Submitted: now.Add(-time.Second)}}
	var mu sync.Mutex
	src := func() []StageStatus { mu.Lock(); defer mu.Unlock(); return append([]StageStatus(nil), stages...) }
	b := New(&out, src, Options{Now: func() time.Time { return now }, Ticks: ticks, PlainInterval: time.Hour})
	b.onRefresh = func() { refreshed <- struct{}{} }
	b.Start()
	defer b.Stop()
	ticks <- now
	<-refreshed
	mu.Lock()
	stages = []StageStatus{{StageID: 3, Name: "pi", NumTasks: 20, Completed: 20, Submitted: now.Add(-time.Second), Ended: true}}
	mu.Unlock()
	ticks <- now
	<-refreshed
	if got := out.String(); !strings.Contains(got, "Stage 3 (pi): finished, 20/20 tasks done, 0 failed\n") {
		t.Fatalf("final line lacks the final counts: %q", got)
	}
	mu.Lock()
	stages = []StageStatus{{StageID: 3, Name: "pi", NumTasks: 20, Completed: 20, Submitted: now.Add(-time.Second), Ended: true}}
	mu.Unlock()
	before := out.Len()
	ticks <- now
	<-refreshed
	if out.Len() != before {
		t.Fatalf("an ended stage reported again: %q", out.String()[before:])
	}
}

// A stage that succeeded is "finished" with every task done even when the
// poll saw it at 0 of 1 (issue 23, item 7: `ended, 0/1 tasks done` for a
// successful stage); one that failed stays "ended" with its counts.
func TestPlainFinalOfASucceededStageIsTrue(t *testing.T) {
	s := StageStatus{StageID: 4, Name: "count at main.go:12", NumTasks: 1, Ended: true, Succeeded: true}
	if got, want := PlainFinal(s), "Stage 4 (count at main.go:12): finished, 1/1 tasks done, 0 failed"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	s.Succeeded, s.Failed = false, 4
	if got, want := PlainFinal(s), "Stage 4 (count at main.go:12): ended, 0/1 tasks done, 4 failed"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// FinishAll prints the final lines of the stages that ended at once, so
// they come before what the driver prints about the job's end, and no
// running stage's line with them (issue 23, item 7: final lines out of
// order).
func TestPlainFinishAllPrintsEndedStagesAtOnce(t *testing.T) {
	h := newHarness(t, Options{Terminal: false, PlainInterval: time.Hour})
	start := h.now
	a := StageStatus{StageID: 0, Name: "reduceByKey at wc.go:100", NumTasks: 2, Active: 2, Submitted: start}
	b := StageStatus{StageID: 1, NumTasks: 3, Active: 1, Submitted: start}
	h.set(0, a, b)
	if got := h.tick(time.Second); got != "Stage 0 (reduceByKey at wc.go:100): 0/2 tasks done, 2 running, 0 failed\nStage 1: 0/3 tasks done, 1 running, 0 failed\n" {
		t.Fatalf("first lines: %q", got)
	}
	a.Completed, a.Active, a.Ended, a.Succeeded = 2, 0, true, true
	b.Completed = 1
	h.set(0, a, b)
	before := h.out.Len()
	h.bar.FinishAll()
	if got := h.out.String()[before:]; got != "Stage 0 (reduceByKey at wc.go:100): finished, 2/2 tasks done, 0 failed\n" {
		t.Errorf("FinishAll printed %q, want the ended stage's final line only", got)
	}
}
