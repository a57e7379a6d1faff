package sortlines_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/examples/internal/exampletest"
	"github.com/flint-mesos/flint/examples/sortlines"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func genLines(r *rand.Rand, n int) []string {
	alphabet := []byte("abcAB \t\r\x00é\xff0123456789zz")
	lines := make([]string, n)
	for i := range lines {
		if r.IntN(20) == 0 && i > 0 {
			lines[i] = lines[r.IntN(i)] // duplicates
			continue
		}
		b := make([]byte, r.IntN(40))
		for j := range b {
			b[j] = alphabet[r.IntN(len(alphabet))]
		}
		lines[i] = string(b)
	}
	return lines
}

// The output is the standard library's sort of the same lines, and GNU
// sort's under LC_ALL=C where it is installed — with small splits, more
// output partitions than input splits and a shuffle memory small enough
// to spill.
func TestSortMatchesSortOfTheSameLines(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	dir := t.TempDir()
	var all []string
	var inputs []string
	for i, n := range []int{20000, 3000, 1} {
		lines := genLines(r, n)
		all = append(all, lines...)
		p := filepath.Join(dir, "in"+string(rune('a'+i)))
		text := strings.Join(lines, "\n")
		if i != 1 {
			text += "\n" // the second file has no final newline
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, p)
	}
	out := filepath.Join(dir, "out")
	fc := exampletest.Local(t, "flint.files.maxPartitionBytes", "65536", "flint.shuffle.memory", "1")
	if err := sortlines.Run(context.Background(), fc, sortlines.Options{Inputs: inputs, Output: out, Partitions: 7}); err != nil {
		t.Fatal(err)
	}
	got := exampletest.Output(t, out)
	slices.Sort(all)
	if want := strings.Join(all, "\n") + "\n"; got != want {
		t.Fatalf("output (%d bytes) is not the sorted input (%d bytes)", len(got), len(want))
	}
	if _, err := exec.LookPath("sort"); err == nil {
		cmd := exec.Command("sort", inputs...)
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		gnu, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(gnu, []byte(got)) {
			t.Fatal("output differs from LC_ALL=C sort")
		}
	}
	parts, _ := filepath.Glob(filepath.Join(out, "part-*"))
	if len(parts) < 2 {
		t.Fatalf("%d part files: the sort was not range-partitioned", len(parts))
	}
}

func TestSortRefusesAnExistingOutput(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "in"), []byte("b\na\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "x"), nil, 0o644)
	if err := sortlines.Check([]string{"--input", filepath.Join(dir, "in"), "--output", dir}); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("Check: %v", err)
	}
	fc := exampletest.Local(t)
	err := sortlines.Run(context.Background(), fc, sortlines.Options{Inputs: []string{filepath.Join(dir, "in")}, Output: dir})
	if err == nil || !strings.Contains(err.Error(), "already exists and is not empty") {
		t.Fatalf("Run: %v", err)
	}
}
