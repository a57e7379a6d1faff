package dispatcher

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)

// step is one input of a core script and the states every driver has after it.
type step struct {
	do   string // "submit a", "launch a", "update a-1 running", "kill a", "tick 5s", "unplaceable a"
	want string // "a=QUEUED b=RUNNING", sorted by id; "" = not checked
	ret  string // what the step returned, when it matters: "kill-task a-1", "stale", "err"
}

func runScript(t *testing.T, cfg CoreConfig, steps []step) *Core {
	t.Helper()
	c := NewCore(cfg)
	now := t0
	for i, s := range steps {
		f := strings.Fields(s.do)
		var ret string
		switch f[0] {
		case "submit":
			spec := Spec{Cores: 1, MemMB: 512, Supervise: len(f) > 2 && f[2] == "supervised"}
			if _, err := c.Submit(f[1], spec, now); err != nil {
				ret = "err"
			}
		case "launch":
			if _, err := c.Launched(f[1], "agent-1", "host-1", now); err != nil {
				ret = "err"
			}
		case "update":
			ends := map[string]TaskEnd{"starting": TaskStarting, "running": TaskRunning, "finished": TaskSucceeded,
				"failed": TaskFailed, "killed": TaskKilled, "lost": TaskLost, "unknown": TaskUnknown}
			if _, stale := c.Update(f[1], ends[f[2]], f[2], now); stale {
				ret = "stale"
			}
		case "kill":
			_, task, err := c.Kill(f[1], now)
			switch {
			case err != nil:
				ret = "err"
			case task != "":
				ret = "kill-task " + task
			}
		case "tick":
			d, _ := time.ParseDuration(f[1])
			now = now.Add(d)
		case "unplaceable":
			if c.Unplaceable(f[1], "too big", now) == nil {
				ret = "err"
			}
		case "launchable":
			var ids []string
			for _, r := range c.Launchable(now) {
				ids = append(ids, r.ID)
			}
			ret = strings.Join(ids, ",")
		default:
			t.Fatalf("step %d: unknown %q", i, s.do)
		}
		if ret != s.ret {
			t.Fatalf("step %d %q returned %q, want %q", i, s.do, ret, s.ret)
		}
		if s.want != "" {
			var got []string
			for _, r := range c.List() {
				got = append(got, r.ID+"="+string(r.State))
			}
			if g := strings.Join(got, " "); g != s.want {
				t.Fatalf("step %d %q: states %q, want %q", i, s.do, g, s.want)
			}
		}
	}
	return c
}

func TestCoreScripts(t *testing.T) {
	cfg := CoreConfig{MaxDrivers: 2, MaxRetries: 2, MinBackoff: time.Second, MaxBackoff: 3 * time.Second}
	cases := map[string][]step{
		"fifo with a cap of two running drivers": {
			{do: "submit a"}, {do: "submit b"}, {do: "submit c"},
			{do: "launchable", ret: "a,b"},
			{do: "launch a"}, {do: "launch b", want: "a=LAUNCHED b=LAUNCHED c=QUEUED"},
			{do: "launchable", ret: ""},
			{do: "update a-1 running", want: "a=RUNNING b=LAUNCHED c=QUEUED"},
			{do: "update a-1 finished", want: "a=FINISHED b=LAUNCHED c=QUEUED"},
			{do: "launchable", ret: "c"},
		},
		"a failure of an unsupervised driver is final": {
			{do: "submit a"}, {do: "launch a"}, {do: "update a-1 running"},
			{do: "update a-1 failed", want: "a=FAILED"},
			{do: "launchable", ret: ""},
		},
		"supervised: relaunched after back-off, doubling, up to the cap": {
			{do: "submit a supervised"}, {do: "launch a"}, {do: "update a-1 failed", want: "a=RELAUNCHING"},
			{do: "launchable", ret: ""},
			{do: "tick 999ms"}, {do: "launchable", ret: ""},
			{do: "tick 1ms"}, {do: "launchable", ret: "a"},
			{do: "launch a", want: "a=LAUNCHED"},
			{do: "update a-1 running", ret: "stale", want: "a=LAUNCHED"}, // the first attempt's task
			{do: "update a-2 lost", want: "a=RELAUNCHING"},
			{do: "tick 1s"}, {do: "launchable", ret: ""}, // second back-off is 2 s
			{do: "tick 1s"}, {do: "launchable", ret: "a"},
			{do: "launch a"}, {do: "update a-3 failed", want: "a=FAILED"}, // retries exhausted
		},
		"supervised: success and kill are final": {
			{do: "submit a supervised"}, {do: "submit b supervised"},
			{do: "launch a"}, {do: "launch b"},
			{do: "update a-1 finished", want: "a=FINISHED b=LAUNCHED"},
			{do: "kill b", ret: "kill-task b-1", want: "a=FINISHED b=LAUNCHED"},
			{do: "update b-1 failed", want: "a=FINISHED b=KILLED"}, // failed while being killed: killed
		},
		"kill of a queued driver ends it at once; a second kill is refused": {
			{do: "submit a"}, {do: "kill a", want: "a=KILLED"},
			{do: "kill a", ret: "err"}, {do: "kill nope", ret: "err"},
			{do: "launchable", ret: ""},
		},
		"kill of a relaunching driver ends it at once": {
			{do: "submit a supervised"}, {do: "launch a"}, {do: "update a-1 lost"},
			{do: "kill a", want: "a=KILLED"}, {do: "tick 10s"}, {do: "launchable", ret: ""},
		},
		"a launch the master never got goes back to its place": {
			{do: "submit a"}, {do: "submit b"}, {do: "launch a"},
			{do: "update a-1 unknown", want: "a=QUEUED b=QUEUED"},
			{do: "launchable", ret: "a,b"},
			{do: "launch a"}, {do: "update a-2 running", want: "a=RUNNING b=QUEUED"},
			{do: "update a-2 unknown", want: "a=FAILED b=QUEUED"}, // it ran: unknown now is lost
		},
		"unplaceable drivers fail and free their place": {
			{do: "submit a"}, {do: "submit b"}, {do: "unplaceable a", want: "a=FAILED b=QUEUED"},
			{do: "launchable", ret: "b"}, {do: "unplaceable a", ret: "err"},
		},
		"an unknown task is stale": {
			{do: "update zzz-1 running", ret: "stale"},
		},
	}
	for name, steps := range cases {
		t.Run(name, func(t *testing.T) { runScript(t, cfg, steps) })
	}
}

func TestCoreRestoreKeepsOrderAndTasks(t *testing.T) {
	c := runScript(t, CoreConfig{MaxDrivers: 1}, []step{
		{do: "submit a"}, {do: "submit b"}, {do: "launch a"}, {do: "update a-1 running"},
	})
	recs := c.List()
	c2 := NewCore(CoreConfig{MaxDrivers: 1})
	c2.Restore(recs)
	if l := c2.Launchable(t0); len(l) != 0 {
		t.Fatalf("restored core launches %v while a runs (max 1)", l)
	}
	if r, stale := c2.Update("a-1", TaskSucceeded, "", t0); stale || r.State != Finished {
		t.Fatalf("restored core does not know a's task: %v %v", r, stale)
	}
	if l := c2.Launchable(t0); len(l) != 1 || l[0].ID != "b" {
		t.Fatalf("launchable after a finished: %v, want b", l)
	}
	if _, err := c2.Submit("c", Spec{}, t0); err != nil {
		t.Fatal(err)
	}
	if r, _ := c2.Get("c"); r.Seq != 3 {
		t.Fatalf("new submission's seq %d, want 3 (after the restored ones)", r.Seq)
	}
}

func TestCoreBackoff(t *testing.T) {
	c := NewCore(CoreConfig{MinBackoff: time.Second, MaxBackoff: 5 * time.Second})
	for n, want := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 5 * time.Second, 10: 5 * time.Second} {
		if got := c.backoff(n); got != want {
			t.Errorf("backoff(%d) = %v, want %v", n, got, want)
		}
	}
}

func TestCoreErrors(t *testing.T) {
	c := NewCore(CoreConfig{})
	if _, _, err := c.Kill("x", t0); !errors.Is(err, ErrUnknownDriver) {
		t.Fatalf("kill unknown: %v", err)
	}
	_, _ = c.Submit("a", Spec{}, t0)
	_, _, _ = c.Kill("a", t0)
	if _, _, err := c.Kill("a", t0); !errors.Is(err, ErrEnded) {
		t.Fatalf("kill ended: %v", err)
	}
	if _, err := c.Launched("a", "", "", t0); err == nil || !strings.Contains(err.Error(), fmt.Sprint(Killed)) {
		t.Fatalf("launch of a killed driver: %v", err)
	}
}
