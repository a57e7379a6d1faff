package localip

import (
	"errors"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTowardsLoopback(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1":      "127.0.0.1",
		"127.0.0.1:5050": "127.0.0.1",
		"::1":            "::1",
		"[::1]:2181":     "::1",
	} {
		got, err := Towards(in)
		if err != nil && want == "::1" {
			t.Logf("no IPv6 loopback here: %v", err)
			continue
		}
		if err != nil || got != want {
			t.Errorf("Towards(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if got := TowardsOrEmpty("localhost"); got != "127.0.0.1" && got != "::1" {
		t.Errorf("TowardsOrEmpty(localhost) = %q", got)
	}
}

func TestTowardsFailures(t *testing.T) {
	if _, err := Towards(""); !errors.Is(err, ErrNoHost) {
		t.Errorf("empty host: %v", err)
	}
	if _, err := Towards(":5050"); !errors.Is(err, ErrNoHost) {
		t.Errorf("port only: %v", err)
	}
	if _, err := Towards("no-such-host.invalid"); err == nil {
		t.Error("an unresolvable name has a route")
	}
	if got := TowardsOrEmpty("no-such-host.invalid"); got != "" {
		t.Errorf("TowardsOrEmpty of an unresolvable name = %q", got)
	}
}
