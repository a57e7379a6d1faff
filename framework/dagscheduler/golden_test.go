package dagscheduler

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The golden scenario scripts in testdata/*.txt drive a DAG core step by
// step; lines starting with "> " after a step list every event that step
// must produce, in order. See testdata/README.txt for the syntax. Run with
// -rewrite to regenerate the expected lines (then review the diff).

var rewrite = flag.Bool("rewrite", false, "rewrite golden files with the actual output")

var t0 = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden scripts: %v", err)
	}
	for _, f := range files {
		if filepath.Base(f) == "README.txt" {
			continue
		}
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runGolden(t, f) })
	}
}

func runGolden(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r := newGoldenRunner(t, file)
	var out []string // rewritten file
	var want []string
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	line := 0
	flushStep := func() {
		got := r.pending
		r.check(want)
		want = nil
		for _, g := range got {
			out = append(out, "> "+g)
		}
	}
	for sc.Scan() {
		line++
		raw := sc.Text()
		text := strings.TrimSpace(raw)
		if strings.HasPrefix(text, ">") {
			want = append(want, strings.TrimSpace(strings.TrimPrefix(text, ">")))
			continue
		}
		flushStep()
		out = append(out, raw)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		r.stepLine, r.step = line, text
		r.pending = r.run(tokenize(t, text))
	}
	flushStep()
	if *rewrite {
		if err := os.WriteFile(file, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func (r *goldenRunner) check(want []string) {
	got := r.pending
	r.pending = nil
	if *rewrite {
		return
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		r.t.Errorf("%s:%d: %s\n got:\n  > %s\nwant:\n  > %s", r.file, r.stepLine, r.step,
			strings.Join(got, "\n  > "), strings.Join(want, "\n  > "))
	}
}

func (r *goldenRunner) fatalf(format string, a ...any) {
	r.t.Fatalf("%s:%d: %s: %s", r.file, r.stepLine, r.step, fmt.Sprintf(format, a...))
}

// tokenize splits on spaces, keeping "quoted strings" (Go syntax) whole.
func tokenize(t *testing.T, s string) []string {
	var out []string
	for s = strings.TrimSpace(s); s != ""; s = strings.TrimSpace(s) {
		end := strings.IndexByte(s, ' ')
		if q := strings.IndexByte(s, '"'); q >= 0 && (end < 0 || q < end) {
			rest := s[q:]
			n := 1
			for n < len(rest) && rest[n] != '"' {
				if rest[n] == '\\' {
					n++
				}
				n++
			}
			uq, err := strconv.Unquote(rest[:n+1])
			if err != nil {
				t.Fatalf("bad quoted string in %q: %v", s, err)
			}
			out = append(out, s[:q]+uq)
			s = rest[n+1:]
			continue
		}
		if end < 0 {
			end = len(s)
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}

// kv splits key=value arguments (repeatable keys collect in order) from
// positional ones.
func kv(args []string) (map[string][]string, []string) {
	m := map[string][]string{}
	var pos []string
	for _, a := range args {
		if k, v, ok := strings.Cut(a, "="); ok {
			m[k] = append(m[k], v)
		} else {
			pos = append(pos, a)
		}
	}
	return m, pos
}

func first(m map[string][]string, k, def string) string {
	if v := m[k]; len(v) > 0 {
		return v[0]
	}
	return def
}
