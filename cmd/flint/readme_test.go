package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// readmeSubmits is every `flint submit` command in the README's sh code
// blocks, as written (the trailing comment dropped).
func readmeSubmits(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	in := false
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "```sh"):
			in = true
		case strings.HasPrefix(line, "```"):
			in = false
		case in && strings.Contains(line, "flint submit "):
			if i := strings.Index(line, " #"); i >= 0 {
				line = line[:i]
			}
			cmds = append(cmds, strings.TrimSpace(line))
		}
	}
	return cmds
}

// shellWords splits a command line as sh does for what the README uses:
// words separated by blanks, single quotes kept literally.
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if inWord {
				words = append(words, w.String())
				w.Reset()
			}
			inWord = false
		case r == '"' || r == '\\' || r == '$' || r == '`' || r == '&' || r == '|' || r == ';':
			t.Fatalf("README command %q uses %q, which this test does not interpret", s, r)
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// The README's `flint submit` commands run verbatim — relative paths and
// all — on the master they name (the default embedded one for most), from
// a directory holding the small inputs they need, and print or write what
// the same computation gives done plainly in Go.
func TestReadmeSubmitCommandsRunVerbatim(t *testing.T) {
	cmds := readmeSubmits(t)
	if len(cmds) < 7 {
		t.Fatalf("found %d flint submit commands in the README: %q", len(cmds), cmds)
	}
	var mesosAddr string
	for _, c := range cmds {
		words := shellWords(t, c)
		i := indexOf(words, "submit")
		if i < 0 {
			t.Fatalf("no submit in %q", c)
		}
		prog := strings.Join(words[:i], " ")
		args := words[i+1:]
		switch prog {
		case "go run ./cmd/flint", "./flint": // flintBin is `go build ./cmd/flint`
		case "~/src/flint/flint":
			if len(args) > 0 && args[0] == "." {
				continue // "Your own job": TestReadmeOwnModuleRecipe follows that recipe
			}
			fallthrough
		default:
			t.Fatalf("README runs flint as %q in %q", prog, c)
		}
		if indexOf(args, "--deploy-mode") >= 0 { // cluster mode: the README's dispatcher lines (dispatcher_test.go)
			t.Run(strings.Join(args, " "), func(t *testing.T) { runReadmeClusterSubmit(t, args) })
			continue
		}
		if j := indexOf(args, "--master"); j >= 0 && strings.HasPrefix(args[j+1], "mesos://") {
			if mesosAddr == "" {
				mesosAddr = startMesosLocal(t)
			}
			args[j+1] = "mesos://" + mesosAddr // the README's 127.0.0.1:5050 may be taken
		}
		t.Run(strings.Join(args, " "), func(t *testing.T) { runReadmeSubmit(t, args) })
	}
}

func indexOf(words []string, w string) int {
	for i, x := range words {
		if x == w {
			return i
		}
	}
	return -1
}

// runReadmeSubmit runs `flint submit args` in a fresh directory holding the
// inputs the README's examples name, and checks what it printed or wrote.
func runReadmeSubmit(t *testing.T, args []string) {
	dir := t.TempDir()
	check := prepareReadmeInputs(t, dir, args)
	cmd := exec.Command(flintBin, append([]string{"submit"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("flint submit %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, o.String(), e.String())
	}
	if err := check(o.String()); err != nil {
		t.Fatalf("flint submit %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, o.String(), e.String())
	}
}

func exampleOf(args []string) string {
	if i := indexOf(args, "--example"); i >= 0 {
		return args[i+1]
	}
	return ""
}

// prepareReadmeInputs writes the inputs args name into dir and returns the
// check of the command's output.
func prepareReadmeInputs(t *testing.T, dir string, args []string) func(stdout string) error {
	t.Helper()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	switch ex := exampleOf(args); ex {
	case "pi":
		return func(out string) error {
			if !regexp.MustCompile(`Pi is roughly 3\.1[0-9]*`).MatchString(out) {
				return fmt.Errorf("no estimate of pi")
			}
			return nil
		}
	case "wordcount":
		// docs/ as in the repository: text and a PNG, whose bytes are no words
		write("docs/a.md", "The cat and the dog\nthe end\n")
		write("docs/b.md", "a cat\n")
		write("docs/pic.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR zebra zebra zebra zebra\n")
		return expectLines("9 words, 6 distinct\n" + "       3  the\n       2  cat\n       1  a\n       1  and\n       1  dog\n       1  end\n")
	case "sort":
		var lines []string
		for i := range 500 {
			lines = append(lines, fmt.Sprintf("line %d %x", (i*7919)%500, i*31))
		}
		write("big.txt", strings.Join(lines, "\n")+"\n")
		sort.Strings(lines) // LC_ALL=C: byte order
		return expectPartFiles(t, filepath.Join(dir, "sorted"), strings.Join(lines, "\n")+"\n", false)
	case "join":
		write("a.tsv", "k1\tl1\nk2\tl2\nk2\tl2b\nk3\tl3\n")
		write("b.tsv", "k2\tr2\nk3\tr3\nk4\tr4\n")
		return expectPartFiles(t, filepath.Join(dir, "joined"), "k2\tl2\tr2\nk2\tl2b\tr2\nk3\tl3\tr3\n", true)
	case "events":
		write("events.json", `{"user": "ann", "kind": "buy", "amount": 2.5}`+"\n"+`{"user": "ann", "kind": "buy", "amount": 1}`+"\n"+
			`{"user": "bob", "kind": "view", "amount": 0}`+"\n"+`{"user": "bob", "amount": "lots"}`+"\n")
		out := filepath.Join(dir, "totals")
		return func(stdout string) error {
			if want := "3 events (1 malformed lines dropped): 2 totals per user and kind written to totals/\n"; stdout != want {
				return fmt.Errorf("stdout %q, want %q", stdout, want)
			}
			if files, _ := filepath.Glob(filepath.Join(out, "part-*.parquet")); len(files) == 0 {
				return fmt.Errorf("no Parquet part file under %s", out)
			}
			if _, err := os.Stat(filepath.Join(out, "_SUCCESS")); err != nil {
				return fmt.Errorf("output not committed: %w", err)
			}
			return nil
		}
	case "pagerank":
		edges := [][2]string{{"a", "b"}, {"a", "c"}, {"b", "c"}, {"c", "a"}, {"d", "c"}, {"d", "a"}}
		var text strings.Builder
		for _, e := range edges {
			fmt.Fprintf(&text, "%s\t%s\n", e[0], e[1])
		}
		write("edges.tsv", text.String())
		return expectLines(plainPageRank(edges, iterationsOf(t, args)))
	default:
		t.Fatalf("the README submits example %q, which this test has no inputs for", ex)
		return nil
	}
}

func iterationsOf(t *testing.T, args []string) int {
	i := indexOf(args, "--iterations")
	var n int
	if i < 0 {
		t.Fatal("pagerank without --iterations")
	}
	fmt.Sscan(args[i+1], &n)
	return n
}

// plainPageRank is the example's PageRank done with maps: every page with
// out-links starts at 1; each iteration a page's rank is 0.15 + 0.85 × the
// sum of rank/outdegree over its in-links (pages with no in-links drop
// out, as in Spark's example); printed top 10 as the example prints.
func plainPageRank(edges [][2]string, iterations int) string {
	links := map[string][]string{}
	for _, e := range edges {
		links[e[0]] = append(links[e[0]], e[1])
	}
	ranks := map[string]float64{}
	for p := range links {
		ranks[p] = 1
	}
	for range iterations {
		sums := map[string]float64{}
		for p, r := range ranks {
			for _, u := range links[p] {
				sums[u] += r / float64(len(links[p]))
			}
		}
		ranks = map[string]float64{}
		for p, s := range sums {
			ranks[p] = 0.15 + 0.85*s
		}
	}
	pages := make([]string, 0, len(ranks))
	for p := range ranks {
		pages = append(pages, p)
	}
	sort.Slice(pages, func(i, j int) bool {
		if ranks[pages[i]] != ranks[pages[j]] {
			return ranks[pages[i]] > ranks[pages[j]]
		}
		return pages[i] < pages[j]
	})
	var out strings.Builder
	for _, p := range pages[:min(10, len(pages))] {
		fmt.Fprintf(&out, "%-20s %.6f\n", p, ranks[p])
	}
	return out.String()
}

// expectLines checks that stdout is want.
func expectLines(want string) func(string) error {
	return func(out string) error {
		if out != want {
			return fmt.Errorf("stdout %q, want %q", out, want)
		}
		return nil
	}
}

// expectPartFiles checks that the part files under dir, in order, hold
// want (as a multiset of lines when anyOrder), and that the output was
// committed (_SUCCESS).
func expectPartFiles(t *testing.T, dir, want string, anyOrder bool) func(string) error {
	return func(string) error {
		if _, err := os.Stat(filepath.Join(dir, "_SUCCESS")); err != nil {
			return fmt.Errorf("output not committed: %w", err)
		}
		parts, _ := filepath.Glob(filepath.Join(dir, "part-*"))
		sort.Strings(parts)
		var got strings.Builder
		for _, p := range parts {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			got.Write(b)
		}
		g := got.String()
		if anyOrder {
			g, want = sortedLines(g), sortedLines(want)
		}
		if g != want {
			return fmt.Errorf("part files under %s hold %q, want %q", dir, g, want)
		}
		return nil
	}
}

func sortedLines(s string) string {
	l := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	sort.Strings(l)
	return strings.Join(l, "\n") + "\n"
}

// startMesosLocal starts `flint mesos local` (2 agents, as the README's)
// on a free port and stops it when the test ends.
func startMesosLocal(t *testing.T) string {
	t.Helper()
	addr := freePort(t)
	cmd := exec.Command(flintBin, "mesos", "local", "--listen", addr, "--work-dir", t.TempDir(), "--log-level", "warn")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	if !waitfor.Poll(20*time.Second, func() bool { return masterHasAgents(addr, 2) }) {
		t.Fatalf("flint mesos local on %s has not got 2 agents\nstderr:\n%s", addr, errOut.String())
	}
	return addr
}

// masterHasAgents reports whether the master at addr lists n agents.
func masterHasAgents(addr string, n int) bool {
	resp, err := http.Get("http://" + addr + "/state")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var st struct {
		Slaves []json.RawMessage `json:"slaves"`
	}
	return json.NewDecoder(resp.Body).Decode(&st) == nil && len(st.Slaves) >= n
}
