package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// echo is a step function: "add a b" outputs their sum, "say ..." its
// tokens one per line.
func echo(s Step) []string {
	switch s.Tokens[0] {
	case "add":
		var a, b int
		fmt.Sscan(s.Tokens[1], &a)
		fmt.Sscan(s.Tokens[2], &b)
		return []string{fmt.Sprint(a + b)}
	case "say":
		return s.Tokens[1:]
	}
	return nil
}

func writeScript(t *testing.T, text string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "s.txt")
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

func TestRunFilePassesAMatchingScript(t *testing.T) {
	f := writeScript(t, "# a comment\nadd 1 2\n> 3\n\nsay x \"y z\"\n  > x\n  > y z\nsay\n")
	var steps []string
	RunFile(t, f, false, func(s Step) []string {
		steps = append(steps, fmt.Sprintf("%d:%s", s.Line, s.Text))
		return echo(s)
	})
	if want := []string{"2:add 1 2", "5:say x \"y z\"", "8:say"}; !reflect.DeepEqual(steps, want) {
		t.Fatalf("steps %q, want %q", steps, want)
	}
}

// recorder is a testing.TB that keeps what Errorf reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}
func (r *recorder) Helper() {}

func TestRunFileReportsAMismatchWithItsLine(t *testing.T) {
	f := writeScript(t, "add 1 2\n> 4\nadd 2 2\n> 4\nsay a\n")
	rec := &recorder{TB: t}
	RunFile(rec, f, false, echo)
	if len(rec.errs) != 2 {
		t.Fatalf("%d errors, want 2 (a wrong sum, an output not listed): %q", len(rec.errs), rec.errs)
	}
	if want := f + ":1: add 1 2\n got:\n  > 3\nwant:\n  > 4"; rec.errs[0] != want {
		t.Errorf("first error %q, want %q", rec.errs[0], want)
	}
	if !strings.HasPrefix(rec.errs[1], f+":5: say a\n got:\n  > a\nwant:") {
		t.Errorf("second error %q", rec.errs[1])
	}
}

func TestRunFileRewrites(t *testing.T) {
	f := writeScript(t, "# sums\nadd 1 2\n> 7\n> stale\n\nadd 3 4\n")
	RunFile(t, f, true, echo)
	got, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	if want := "# sums\nadd 1 2\n> 3\n\nadd 3 4\n> 7\n"; string(got) != want {
		t.Fatalf("rewritten script %q, want %q", got, want)
	}
}

func TestTokenize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{"  a  b=c ", []string{"a", "b=c"}, ""},
		{`msg="it \"broke\"" x`, []string{`msg=it "broke"`, "x"}, ""},
		{`"" end`, []string{"", "end"}, ""},
		{`msg="open`, nil, "unterminated quoted string"},
		{`msg="bad \q"`, nil, "bad quoted string"},
	} {
		got, err := Tokenize(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Tokenize(%q) error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("Tokenize(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestKV(t *testing.T) {
	m, pos := KV([]string{"a=1", "x", "a=2", "b=", "y"})
	if !reflect.DeepEqual(m, map[string][]string{"a": {"1", "2"}, "b": {""}}) || !reflect.DeepEqual(pos, []string{"x", "y"}) {
		t.Fatalf("KV = %v, %v", m, pos)
	}
	if First(m, "a", "d") != "1" || First(m, "c", "d") != "d" {
		t.Fatalf("First: %q %q", First(m, "a", "d"), First(m, "c", "d"))
	}
	if l := Last(m); !reflect.DeepEqual(l, map[string]string{"a": "2", "b": ""}) {
		t.Fatalf("Last = %v", l)
	}
}

func TestRunDirSkipsTheReadme(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"one.txt": "add 1 1\n> 2\n", "two.txt": "say q\n> q\n", "README.txt": "not a script\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var ran []string
	RunDir(t, dir, false, func(t *testing.T, file string) func(Step) []string {
		ran = append(ran, filepath.Base(file))
		return echo
	})
	if !reflect.DeepEqual(ran, []string{"one.txt", "two.txt"}) {
		t.Fatalf("ran %v", ran)
	}
}
