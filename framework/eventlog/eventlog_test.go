package eventlog

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/framework/event"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// sample has every event type, with every field set.
func sample() []event.Event {
	return []event.Event{
		event.ApplicationStart{Time: at(0), AppID: "app-1", Name: "demo", User: "ann", Version: "v1 (abc)", Master: "embedded"},
		event.EnvironmentUpdate{Time: at(0), Properties: [][2]string{{"flint.app.name", "demo"}}, Runtime: [][2]string{{"goVersion", "go1.26"}}},
		event.ExecutorAdded{Time: at(1), ExecutorID: "1", Host: "h", Cores: 4},
		event.JobStart{Time: at(2), JobID: 7, Name: "j", StageIDs: []int{3, 4}, NumTasks: 9,
			Stages: []event.StageInfo{{StageID: 3, Name: "m", NumTasks: 5}, {StageID: 4, Name: "r", NumTasks: 4, ParentIDs: []int{3}}}},
		event.StageSubmitted{Time: at(3), JobID: 7, StageID: 3, Attempt: 1, Name: "m", NumTasks: 5, ParentIDs: []int{1}},
		event.TaskStart{Time: at(4), StageID: 3, TaskID: 11, Index: 2, Attempt: 1, ExecutorID: "1", Host: "h", Locality: "NODE_LOCAL", Speculative: true, StageAttempt: 1},
		event.TaskEnd{Time: at(5), StageID: 3, TaskID: 11, Index: 2, Attempt: 1, ExecutorID: "1", State: "FAILED", Reason: "boom\nstack",
			RunTime: 3 * time.Millisecond, ResultSize: 10, StageAttempt: 1, DecodeTime: time.Microsecond, EncodeTime: 2 * time.Microsecond,
			InputSize: 5, ShuffleReadBytes: 6, ShuffleWriteBytes: 7},
		event.StageCompleted{Time: at(6), JobID: 7, StageID: 3, Attempt: 1, FailureReason: "x"},
		event.JobEnd{Time: at(7), JobID: 7, Err: errors.New("job 7 failed")},
		event.JobEnd{Time: at(8), JobID: 8},
		event.ExecutorRemoved{Time: at(9), ExecutorID: "1", Reason: "lost"},
		event.ApplicationEnd{Time: at(10)},
	}
}

type collect struct{ got []event.Event }

func (c *collect) OnEvent(e event.Event) { c.got = append(c.got, e) }

func same(t *testing.T, got, want []event.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if ge, ok := g.(event.JobEnd); ok {
			we := w.(event.JobEnd)
			if ge.Time != we.Time || ge.JobID != we.JobID || fmt.Sprint(ge.Err) != fmt.Sprint(we.Err) {
				t.Fatalf("event %d = %+v, want %+v", i, g, w)
			}
			continue
		}
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("event %d = %#v, want %#v", i, g, w)
		}
	}
}

func write(t *testing.T, dir string, o Options, evs []event.Event) *Writer {
	t.Helper()
	w, err := Create(dir, "app-1", o)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		w.OnEvent(e)
	}
	return w
}

func TestRoundTripPlainAndCompressed(t *testing.T) {
	for _, compress := range []bool{false, true} {
		dir := t.TempDir()
		w := write(t, dir, Options{Compress: compress}, sample())
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		var c collect
		rep, err := Replay(AppDir(dir, "app-1"), &c)
		if err != nil || len(rep.Warnings) != 0 || rep.Files != 1 || rep.Events != len(sample()) {
			t.Fatalf("compress=%v: report %+v, %v", compress, rep, err)
		}
		same(t, c.got, sample())
		if apps, _ := Apps(dir); !reflect.DeepEqual(apps, []string{"app-1"}) {
			t.Fatalf("apps = %v", apps)
		}
	}
}

func TestRollsAtMaxFileSize(t *testing.T) {
	dir := t.TempDir()
	var evs []event.Event
	for i := 0; i < 200; i++ {
		evs = append(evs, event.TaskStart{Time: at(i), TaskID: uint64(i), ExecutorID: "1", Host: "h"})
	}
	w := write(t, dir, Options{MaxFileSize: 2000, Compress: true}, evs)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := Files(AppDir(dir, "app-1"))
	if len(files) < 5 {
		t.Fatalf("%d files, want the log rolled at 2000 bytes", len(files))
	}
	var c collect
	rep, _ := Replay(AppDir(dir, "app-1"), &c)
	if rep.Files != len(files) || len(rep.Warnings) != 0 {
		t.Fatalf("report %+v", rep)
	}
	same(t, c.got, evs)
	// A missing middle file stops the replay there.
	if err := os.Remove(files[2].Path); err != nil {
		t.Fatal(err)
	}
	c = collect{}
	rep, _ = Replay(AppDir(dir, "app-1"), &c)
	if rep.Files != 2 || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "file 3 of the log is missing") {
		t.Fatalf("report %+v", rep)
	}
}

// A flushed log is readable while the writer still runs: a driver killed
// now loses only what came after the last flush.
func TestFlushedEventsAreReadableBeforeClose(t *testing.T) {
	for _, compress := range []bool{false, true} {
		dir := t.TempDir()
		ticks := make(chan time.Time)
		w := write(t, dir, Options{Compress: compress, Ticks: ticks}, sample()[:5])
		ticks <- t0 // the flusher takes it and flushes ...
		ticks <- t0 // ... and is back for the next one: the first flush is done
		var c collect
		rep, _ := Replay(AppDir(dir, "app-1"), &c)
		if rep.Events != 5 {
			t.Fatalf("compress=%v: %d events readable after a flush, want 5 (warnings %v)", compress, rep.Events, rep.Warnings)
		}
		same(t, c.got, sample()[:5])
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTruncatedLogIsReplayedUpToTheDamage(t *testing.T) {
	for _, compress := range []bool{false, true} {
		dir := t.TempDir()
		w := write(t, dir, Options{Compress: compress}, sample())
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		files, _ := Files(AppDir(dir, "app-1"))
		full, _ := os.ReadFile(files[0].Path)
		for cut := 0; cut < len(full); cut += max(1, len(full)/40) {
			if err := os.WriteFile(files[0].Path, full[:cut], 0o640); err != nil {
				t.Fatal(err)
			}
			var c collect
			rep, err := Replay(AppDir(dir, "app-1"), &c)
			if err != nil {
				t.Fatalf("cut at %d: %v", cut, err)
			}
			if len(c.got) > 0 {
				same(t, c.got, sample()[:len(c.got)])
			}
			if len(c.got) == len(sample()) && len(rep.Warnings) == 0 {
				t.Fatalf("compress=%v cut at %d of %d: every event replayed and no warning", compress, cut, len(full))
			}
			if cut > 0 && len(rep.Warnings) == 0 && !compress {
				// A cut right after a newline loses whole events and leaves no trace.
				if full[cut-1] != '\n' {
					t.Fatalf("cut at %d: no warning", cut)
				}
			}
		}
	}
}

func TestCorruptLineStopsTheReplayWithAWarning(t *testing.T) {
	dir := t.TempDir()
	w := write(t, dir, Options{}, sample())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := Files(AppDir(dir, "app-1"))
	b, _ := os.ReadFile(files[0].Path)
	lines := strings.SplitAfter(string(b), "\n")
	lines[3] = `{"Event":"JobStart","Body":{"JobID":"seven"}}` + "\n"
	lines[1] = `{"Event":"FromTheFuture","Body":{}}` + "\n"
	if err := os.WriteFile(files[0].Path, []byte(strings.Join(lines, "")), 0o640); err != nil {
		t.Fatal(err)
	}
	var c collect
	rep, _ := Replay(AppDir(dir, "app-1"), &c)
	want := []event.Event{sample()[0], sample()[2]}
	same(t, c.got, want)
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "line 4 is damaged") || !strings.Contains(rep.Warnings[0], "shown up to line 3") {
		t.Fatalf("warnings %q", rep.Warnings)
	}
}

func TestCreateRejectsBadIDsAndUnwritableDirs(t *testing.T) {
	for _, id := range []string{"", "..", "a/b"} {
		if _, err := Create(t.TempDir(), id, Options{}); err == nil {
			t.Errorf("Create with id %q succeeded", id)
		}
	}
	file := filepath.Join(t.TempDir(), "f")
	_ = os.WriteFile(file, nil, 0o600)
	if _, err := Create(file, "app-1", Options{}); err == nil || !strings.Contains(err.Error(), "flint.eventLog.dir") {
		t.Errorf("Create under a file: %v", err)
	}
}

func FuzzReplay(f *testing.F) {
	dir := f.TempDir()
	w, _ := Create(dir, "seed", Options{})
	for _, e := range sample() {
		w.OnEvent(e)
	}
	_ = w.Close()
	files, _ := Files(AppDir(dir, "seed"))
	good, _ := os.ReadFile(files[0].Path)
	f.Add(good, false)
	f.Add(good[:len(good)/2], false)
	f.Add([]byte("{\"Event\":\"TaskEnd\",\"Body\":{\"TaskID\":-1}}\n\x00\xff"), false)
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0}, true)
	f.Fuzz(func(t *testing.T, data []byte, compressed bool) {
		var c collect
		var rep Report
		replayStream("fuzz", bytes.NewReader(data), compressed, &c, &rep)
		if rep.Events != len(c.got) || (!compressed && rep.Events > bytes.Count(data, []byte("\n"))) {
			t.Fatalf("report %+v with %d events delivered", rep, len(c.got))
		}
	})
}
