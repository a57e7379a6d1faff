package master

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// ACLs is the part of Mesos' authorization ACLs (the master's --acls) that
// minimesos enforces: run_tasks, which principals may launch tasks and
// executors as which OS users. As in Mesos' local authorizer, the first
// rule matching a request decides it; when none matches, Permissive does.
// A nil *ACLs (no --acls) permits everything, as Mesos without ACLs does.
type ACLs struct {
	Permissive bool
	RunTasks   []RunTaskACL
}

// RunTaskACL is one run_tasks rule.
type RunTaskACL struct {
	Principals ACLEntity
	Users      ACLEntity
}

// ACLEntity is Mesos' ACL.Entity: ANY, NONE, or some values.
type ACLEntity struct {
	Any, None bool
	Values    []string
}

func (e ACLEntity) matches(v string) bool {
	return e.Any || slices.Contains(e.Values, v)
}

// AllowsRunAs reports whether principal may run tasks as user.
func (a *ACLs) AllowsRunAs(principal, user string) bool {
	if a == nil {
		return true
	}
	for _, r := range a.RunTasks {
		if r.Principals.None || !r.Principals.matches(principal) {
			continue
		}
		// the subject matches: a NONE object denies, a matching one permits
		switch {
		case r.Users.None:
			return false
		case r.Users.matches(user):
			return true
		}
	}
	return a.Permissive
}

// LoadACLs reads a Mesos ACLs file (JSON: {"permissive": …, "run_tasks":
// [{"principals": {"values": […]} | {"type": "ANY"|"NONE"}, "users": …}]});
// ACL kinds other than run_tasks are refused, since minimesos would not
// enforce them.
func LoadACLs(path string) (*ACLs, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("master: acls: %w", err)
	}
	return ParseACLs(b)
}

// ParseACLs parses the contents of an ACLs file (see LoadACLs).
func ParseACLs(b []byte) (*ACLs, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("master: acls: %w", err)
	}
	a := &ACLs{Permissive: true}
	for k, v := range doc {
		switch k {
		case "permissive":
			if err := json.Unmarshal(v, &a.Permissive); err != nil {
				return nil, fmt.Errorf("master: acls: permissive: %w", err)
			}
		case "run_tasks":
			var rules []struct {
				Principals entityJSON `json:"principals"`
				Users      entityJSON `json:"users"`
			}
			if err := json.Unmarshal(v, &rules); err != nil {
				return nil, fmt.Errorf("master: acls: run_tasks: %w", err)
			}
			for i, r := range rules {
				p, err1 := r.Principals.entity()
				u, err2 := r.Users.entity()
				if err1 != nil || err2 != nil {
					return nil, fmt.Errorf("master: acls: run_tasks[%d]: %v", i, firstErr(err1, err2))
				}
				a.RunTasks = append(a.RunTasks, RunTaskACL{Principals: p, Users: u})
			}
		default:
			return nil, fmt.Errorf("master: acls: %q is not enforced by minimesos (only run_tasks and permissive)", k)
		}
	}
	return a, nil
}

type entityJSON struct {
	Type   string   `json:"type"`
	Values []string `json:"values"`
}

func (e entityJSON) entity() (ACLEntity, error) {
	switch {
	case e.Type == "ANY" && len(e.Values) == 0:
		return ACLEntity{Any: true}, nil
	case e.Type == "NONE" && len(e.Values) == 0:
		return ACLEntity{None: true}, nil
	case (e.Type == "" || e.Type == "SOME") && len(e.Values) > 0:
		return ACLEntity{Values: e.Values}, nil
	}
	return ACLEntity{}, fmt.Errorf("an entity is {\"type\": \"ANY\"}, {\"type\": \"NONE\"} or {\"values\": [...]}, got type %q with %d values", e.Type, len(e.Values))
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// runAsUser is the user a task (and its executor) runs as on an agent:
// CommandInfo.user, else the FrameworkInfo's user.
func runAsUser(cmd *mesos.CommandInfo, fw *mesos.FrameworkInfo) string {
	if u := cmd.GetUser(); u != "" {
		return u
	}
	return fw.GetUser()
}
