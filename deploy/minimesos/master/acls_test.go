package master

import (
	"strings"
	"testing"
)

func TestRunTasksACLs(t *testing.T) {
	a, err := ParseACLs([]byte(`{"permissive": false, "run_tasks": [
		{"principals": {"values": ["flint"]}, "users": {"values": ["alice", "bob"]}},
		{"principals": {"values": ["mallory"]}, "users": {"type": "NONE"}},
		{"principals": {"type": "ANY"}, "users": {"values": ["nobody"]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		principal, user string
		want            bool
	}{
		{"flint", "alice", true}, {"flint", "bob", true}, {"flint", "root", false},
		{"mallory", "nobody", false}, // the NONE rule matches first
		{"other", "nobody", true}, {"other", "alice", false}, {"", "nobody", true},
	} {
		if got := a.AllowsRunAs(c.principal, c.user); got != c.want {
			t.Errorf("%s as %s: %v, want %v", c.principal, c.user, got, c.want)
		}
	}
	if !(*ACLs)(nil).AllowsRunAs("anyone", "root") {
		t.Error("no ACLs must permit everything, as Mesos without --acls")
	}
	if p, _ := ParseACLs([]byte(`{"run_tasks": []}`)); !p.AllowsRunAs("x", "y") {
		t.Error("permissive defaults to true, as in Mesos")
	}
	for doc, want := range map[string]string{
		`{"register_frameworks": []}`:                                       "not enforced by minimesos",
		`{"run_tasks": [{"principals": {"type": "ANY", "values": ["a"]}}]}`: "an entity is",
		`{"permissive": "yes"}`:                                             "permissive",
		`not json`:                                                          "acls",
	} {
		if _, err := ParseACLs([]byte(doc)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", doc, err, want)
		}
	}
}
