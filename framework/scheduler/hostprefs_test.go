package scheduler

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// bruteHostPreferences recomputes PendingHostPreferences by scanning every
// task of every live set.
func bruteHostPreferences(s *TaskScheduler) map[string]int {
	out := map[string]int{}
	for _, m := range s.ordered {
		if m.zombie {
			continue
		}
		for i := range m.flags {
			if !m.isPending(int32(i)) {
				continue
			}
			seen := map[string]bool{}
			for _, loc := range m.ts.Tasks[i].Preferred {
				if loc.Host != "" && !seen[loc.Host] {
					seen[loc.Host] = true
					out[loc.Host]++
				}
			}
		}
	}
	return out
}

func prefer(hosts ...string) TaskSpec {
	var spec TaskSpec
	for _, h := range hosts {
		spec.Preferred = append(spec.Preferred, Location{Host: h})
	}
	return spec
}

func TestPendingHostPreferences(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxTaskFailures = 1
	s, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, want map[string]int) {
		t.Helper()
		got := s.PendingHostPreferences()
		if !maps.Equal(got, want) {
			t.Fatalf("%s: PendingHostPreferences = %v, want %v", what, got, want)
		}
		if brute := bruteHostPreferences(s); !maps.Equal(got, brute) {
			t.Fatalf("%s: PendingHostPreferences = %v, a full scan says %v", what, got, brute)
		}
	}
	check("empty", map[string]int{})
	// Duplicates within a task count once; executor-only preferences and
	// tasks without preferences count nowhere.
	ts := TaskSet{ID: "a", JobID: 0, StageID: 0, Tasks: []TaskSpec{
		prefer("h1"), prefer("h1", "h2"), prefer("h2", "h2"), {},
		{Preferred: []Location{{ExecutorID: "e9"}}},
	}}
	if err := s.Submit(ts, t0); err != nil {
		t.Fatal(err)
	}
	check("submitted", map[string]int{"h1": 2, "h2": 2})
	if got := s.PendingHostPreferences(); true {
		got["h1"] = 100 // a copy: the caller cannot corrupt the counts
		check("after the caller changed its copy", map[string]int{"h1": 2, "h2": 2})
	}

	// One core on h1: a task preferring h1 launches NODE_LOCAL and stops
	// being pending.
	ls := s.ResourceOffers([]WorkerOffer{{ExecutorID: "e1", Host: "h1", Cores: 1}}, t0)
	if len(ls) != 1 || ls[0].Locality != NodeLocal {
		t.Fatalf("launches %+v, want one NODE_LOCAL", ls)
	}
	check("one launched on h1", map[string]int{"h1": 1, "h2": 2})

	// Lost: pending again.
	s.StatusUpdate(ls[0].TaskID, Update{State: Lost, Failure: &Failure{Kind: ExecutorLost, Message: "gone"}}, t0)
	check("lost and pending again", map[string]int{"h1": 2, "h2": 2})

	// A second set, then the first is killed: only the second is counted.
	if err := s.Submit(TaskSet{ID: "b", JobID: 1, StageID: 1, Tasks: []TaskSpec{prefer("h3"), prefer("h1")}}, t0); err != nil {
		t.Fatal(err)
	}
	check("second set", map[string]int{"h1": 3, "h2": 2, "h3": 1})
	s.KillTaskSet("a", "cancelled")
	check("first set killed", map[string]int{"h1": 1, "h3": 1})

	// Everything runs and succeeds: nothing pending.
	ls = s.ResourceOffers([]WorkerOffer{{ExecutorID: "e1", Host: "h1", Cores: 4}, {ExecutorID: "e3", Host: "h3", Cores: 4}}, t0.Add(10e9))
	if len(ls) != 2 {
		t.Fatalf("launches %+v, want 2", ls)
	}
	check("all running", map[string]int{})
	for _, l := range ls {
		s.StatusUpdate(l.TaskID, Update{State: Finished}, t0)
	}
	check("all done", map[string]int{})
}

// TestPropertyPendingHostPreferences drives the scheduler with random
// inputs and compares the incremental counts with a full scan after every
// step.
func TestPropertyPendingHostPreferences(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newPropHarness(t)
		check := func(what string) {
			got, want := h.s.PendingHostPreferences(), bruteHostPreferences(h.s)
			if !maps.Equal(got, want) {
				t.Fatalf("%s: PendingHostPreferences = %v, a full scan says %v", what, got, want)
			}
		}
		submitMulti := func() {
			id := fmt.Sprintf("ts%d", len(h.sets))
			ts := TaskSet{ID: id, JobID: int64(len(h.sets)), StageID: len(h.sets)}
			for range rapid.IntRange(1, 6).Draw(t, "tasks") {
				var hosts []string
				for range rapid.IntRange(0, 3).Draw(t, "nprefs") {
					hosts = append(hosts, fmt.Sprintf("h%d", rapid.IntRange(0, 4).Draw(t, "phost")))
				}
				ts.Tasks = append(ts.Tasks, prefer(hosts...))
			}
			if err := h.s.Submit(ts, h.now); err != nil {
				t.Fatal(err)
			}
			h.sets[id] = len(ts.Tasks)
		}
		submitMulti()
		check("submitted")
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			if rapid.IntRange(0, 9).Draw(t, "multi") == 0 {
				submitMulti()
			} else {
				h.step()
			}
			check("step")
			if rapid.IntRange(0, 19).Draw(t, "kill") == 0 {
				for _, id := range slices.Sorted(maps.Keys(h.sets)) {
					if _, done := h.done[id]; !done {
						h.events(h.s.KillTaskSet(id, "killed"))
						break
					}
				}
				check("kill")
			}
		}
		h.drain()
		check("drained")
		if n := len(h.s.PendingHostPreferences()); n != 0 {
			t.Fatalf("%d hosts still counted after drain", n)
		}
	})
}

func BenchmarkPendingHostPreferences(b *testing.B) {
	s, _ := New(DefaultConfig(), rand.New(rand.NewPCG(1, 1)))
	specs := make([]TaskSpec, 10000)
	for i := range specs {
		specs[i] = prefer(fmt.Sprintf("h%d", i%8))
	}
	if err := s.Submit(TaskSet{ID: "a", Tasks: specs}, t0); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(s.PendingHostPreferences()) != 8 {
			b.Fatal("wrong host count")
		}
	}
}
