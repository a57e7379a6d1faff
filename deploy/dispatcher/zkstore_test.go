package dispatcher

import (
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/mesosconn/detector/zktest"
)

func TestParseZK(t *testing.T) {
	for in, want := range map[string]string{
		"zk://a:2181,b:2181/x/y": "[a:2181 b:2181] /x/y",
		"a:2181":                 "[a:2181] /flint/dispatcher",
		"zk://a:2181/":           "[a:2181] /flint/dispatcher",
	} {
		s, root, err := ParseZK(in)
		if got := fmtList(s) + " " + root; err != nil || got != want {
			t.Errorf("ParseZK(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	if _, _, err := ParseZK("zk:///x"); err == nil {
		t.Error("a URL without servers was accepted")
	}
}

func fmtList(s []string) string {
	out := "["
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out + "]"
}

// TestZKStoreSurvivesANewSession: records and the framework id written by one
// dispatcher's session are what the next one (a restart, or a standby) reads,
// against a real ZooKeeper.
func TestZKStoreSurvivesANewSession(t *testing.T) {
	addr := zktest.Start(t)
	s1, err := NewZKStore([]string{addr}, "/flint/test-dispatcher", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	a := Record{ID: "driver-20261202080000-000a", Seq: 1, State: Running, TaskID: "driver-20261202080000-000a-1", Submitted: t0}
	b := Record{ID: "driver-20261202080000-000b", Seq: 2, State: Queued, Submitted: t0}
	for _, r := range []Record{b, a} {
		if err := s1.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	a.State = Finished
	if err := s1.Save(a); err != nil {
		t.Fatal(err)
	}
	if fid, err := s1.FrameworkID(); err != nil || fid != "" {
		t.Fatalf("framework id before one was saved: %q %v", fid, err)
	}
	if err := s1.SaveFrameworkID("fw-1"); err != nil {
		t.Fatal(err)
	}
	s1.Close()

	s2, err := NewZKStore([]string{addr}, "/flint/test-dispatcher", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != a.ID || got[0].State != Finished || got[1].ID != b.ID || got[1].State != Queued {
		t.Fatalf("loaded %+v", got)
	}
	if fid, err := s2.FrameworkID(); err != nil || fid != "fw-1" {
		t.Fatalf("framework id %q %v", fid, err)
	}
}
