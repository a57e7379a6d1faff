package golden

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Step is one step line of a script.
type Step struct {
	File   string
	Line   int
	Text   string   // the line, trimmed
	Tokens []string // Text split by Tokenize
}

// String is where the step is and what it says, for error messages.
func (s Step) String() string { return fmt.Sprintf("%s:%d: %s", s.File, s.Line, s.Text) }

// RunDir runs every dir/*.txt but README.txt as a subtest named after the
// file; newRun makes each file's step function (a fresh core per script).
func RunDir(t *testing.T, dir string, rewrite bool, newRun func(t *testing.T, file string) func(Step) []string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden scripts in %s: %v", dir, err)
	}
	for _, f := range files {
		if filepath.Base(f) == "README.txt" {
			continue
		}
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			RunFile(t, f, rewrite, newRun(t, f))
		})
	}
}

// RunFile runs the script in file step by step and checks each step's
// output against the "> " lines that follow it; with rewrite it writes the
// file back with the actual output.
func RunFile(t testing.TB, file string, rewrite bool, run func(Step) []string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var (
		out  []string // the file as rewritten
		want []string
		got  []string
		cur  Step
	)
	flush := func() {
		t.Helper()
		if !rewrite && strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s\n got:\n  > %s\nwant:\n  > %s", cur, strings.Join(got, "\n  > "), strings.Join(want, "\n  > "))
		}
		for _, g := range got {
			out = append(out, "> "+g)
		}
		got, want = nil, nil
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for line := 1; sc.Scan(); line++ {
		raw := sc.Text()
		text := strings.TrimSpace(raw)
		if strings.HasPrefix(text, ">") {
			want = append(want, strings.TrimSpace(strings.TrimPrefix(text, ">")))
			continue
		}
		flush()
		out = append(out, raw)
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		cur = Step{File: file, Line: line, Text: text}
		if cur.Tokens, err = Tokenize(text); err != nil {
			t.Fatalf("%s: %v", cur, err)
		}
		got = run(cur)
	}
	flush()
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if rewrite {
		if err := os.WriteFile(file, []byte(strings.Join(out, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Tokenize splits s on spaces, keeping "quoted strings" (Go syntax) whole,
// with any text before the opening quote: key="a b" is one token, key=a b.
func Tokenize(s string) ([]string, error) {
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
			if n >= len(rest) {
				return nil, fmt.Errorf("unterminated quoted string in %q", s)
			}
			uq, err := strconv.Unquote(rest[:n+1])
			if err != nil {
				return nil, fmt.Errorf("bad quoted string in %q: %w", s, err)
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
	return out, nil
}

// KV splits key=value tokens (a repeated key collects its values in
// order) from positional ones.
func KV(tokens []string) (map[string][]string, []string) {
	m := map[string][]string{}
	var pos []string
	for _, a := range tokens {
		if k, v, ok := strings.Cut(a, "="); ok {
			m[k] = append(m[k], v)
		} else {
			pos = append(pos, a)
		}
	}
	return m, pos
}

// First is key's first value in m, or def.
func First(m map[string][]string, key, def string) string {
	if v := m[key]; len(v) > 0 {
		return v[0]
	}
	return def
}

// Last is m with each key's last value.
func Last(m map[string][]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v[len(v)-1]
	}
	return out
}
