package contract_test

import (
	"strings"
	"testing"

	"github.com/flint-mesos/flint/contract"
)

func TestReleaseMessage(t *testing.T) {
	if id, ok := contract.ParseReleaseMessage(contract.ReleaseMessage(42)); !ok || id != 42 {
		t.Fatalf("round trip: %d, %v", id, ok)
	}
	if got := string(contract.ReleaseMessage(42)); got != "flint.shuffle.release:42" {
		t.Fatalf("ReleaseMessage(42) = %q", got)
	}
	for _, b := range []string{"", "flint.shuffle.release:", "flint.shuffle.release:-1", "flint.shuffle.release:01", "other:1"} {
		if _, ok := contract.ParseReleaseMessage([]byte(b)); ok {
			t.Errorf("%q parsed", b)
		}
	}
}

func TestShuffleReleaseMessages(t *testing.T) {
	for _, c := range []struct {
		ns  string
		id  int
		all bool
	}{{"", 7, false}, {"run-1", 0, true}, {"run_2.x", 3, false}, {strings.Repeat("n", 128), 1, false}} {
		ns, id, all, ok := contract.ParseShuffleReleaseMessage(contract.ShuffleReleaseMessage(c.ns, c.id, c.all))
		if !ok || ns != c.ns || all != c.all || (!all && id != c.id) {
			t.Errorf("%+v: parsed %q %d %v %v", c, ns, id, all, ok)
		}
	}
	for _, b := range []string{"flint.shuffle.release-ns:", "flint.shuffle.release-ns:a/b", "flint.shuffle.release-ns:a/-1",
		"flint.shuffle.release-ns:a/01", "flint.shuffle.release-ns:../x", "flint.shuffle.release-ns:a b", "flint.shuffle.release:x",
		"flint.shuffle.release-ns:" + strings.Repeat("n", 129), "flint.shuffle.release-ns:é"} {
		if _, _, _, ok := contract.ParseShuffleReleaseMessage([]byte(b)); ok {
			t.Errorf("%q parsed", b)
		}
	}
}
