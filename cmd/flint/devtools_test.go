package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/config"
)

func TestGenConfigDocWritesTheKeyTable(t *testing.T) {
	out := filepath.Join(t.TempDir(), "configuration.md")
	if _, errOut, code := runFlint(t, "gen-config-doc", out); code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, config.Markdown()) {
		t.Fatalf("gen-config-doc wrote %d bytes, not the %d of config.Markdown()", len(got), len(config.Markdown()))
	}
}

func TestBenchdataIsDeterministicAndSized(t *testing.T) {
	a, errOut, code := runFlint(t, "benchdata", "kv", "-size", "4k", "-seed", "3")
	if code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", code, errOut)
	}
	b, _, _ := runFlint(t, "benchdata", "kv", "-size", "4k", "-seed", "3")
	if a != b {
		t.Fatal("two runs with one seed wrote different data")
	}
	if len(a) < 4096 || len(a) > 4096+64 {
		t.Fatalf("wrote %d bytes for -size 4k", len(a))
	}
	for _, line := range strings.Split(strings.TrimSuffix(a, "\n"), "\n") {
		if k, _, ok := strings.Cut(line, "\t"); !ok || !strings.HasPrefix(k, "k") {
			t.Fatalf("line %q is not key<TAB>value", line)
		}
	}
}

func TestDevCommandsAreHiddenAndCheckTheirArguments(t *testing.T) {
	help, _, _ := runFlint(t, "--help")
	for _, name := range []string{"gen-config-doc", "benchdata", "cpuburn"} {
		if strings.Contains(help, name) {
			t.Errorf("flint --help lists the hidden %s:\n%s", name, help)
		}
	}
	for _, args := range [][]string{{"benchdata", "nosuch"}, {"benchdata", "kv", "-nosuch"}, {"cpuburn", "-procs", "0"}} {
		if _, errOut, code := runFlint(t, args...); code != 2 || !strings.Contains(errOut, "usage:") {
			t.Errorf("flint %v: exit %d, stderr %q; want 2 and a usage line", args, code, errOut)
		}
	}
}
