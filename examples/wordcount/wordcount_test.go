package wordcount_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/examples/wordcount"
	"github.com/flint-mesos/flint/framework"
	_ "github.com/flint-mesos/flint/framework/local"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func localContext(t *testing.T, kv ...string) *framework.Context {
	t.Helper()
	cfg := framework.NewConfig()
	kv = append([]string{"flint.master", "local[3]"}, kv...)
	for i := 0; i < len(kv); i += 2 {
		if err := cfg.Set(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fc.Stop(context.Background()) })
	return fc
}

// independent counts words with a regular expression, not the example's
// tokenizer.
func independent(texts ...string) map[string]int64 {
	re := regexp.MustCompile(`[\p{L}\p{Nd}']+`)
	out := map[string]int64{}
	for _, t := range texts {
		for _, w := range re.FindAllString(t, -1) {
			out[strings.ToLower(w)]++
		}
	}
	return out
}

var vocabulary = []string{"the", "The", "fox", "dog's", "Ünïcode", "naïve", "x1", "2024", "don't", "a", "b", "zebra", "Émile"}

func genText(r *rand.Rand, words int) string {
	var b strings.Builder
	for i := range words {
		b.WriteString(vocabulary[r.IntN(len(vocabulary))])
		switch r.IntN(9) {
		case 0:
			b.WriteString("\n")
		case 1:
			b.WriteString(", ")
		case 2:
			b.WriteString("--")
		default:
			b.WriteString(" ")
		}
		if i%97 == 0 {
			b.WriteString(fmt.Sprintf("w%d ", r.IntN(500)))
		}
	}
	return b.String()
}

func topOf(counts map[string]int64, n int) []wordcount.WordCount {
	var all []wordcount.WordCount
	for w, c := range counts {
		all = append(all, wordcount.WordCount{Word: w, Count: c})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Count != all[j].Count {
			return all[i].Count > all[j].Count
		}
		return all[i].Word < all[j].Word
	})
	return all[:min(n, len(all))]
}

// readOutput parses the part files of an output directory.
func readOutput(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "_SUCCESS")); err != nil {
		t.Fatalf("no _SUCCESS: %v", err)
	}
	parts, _ := filepath.Glob(filepath.Join(dir, "part-*"))
	if len(parts) == 0 {
		t.Fatal("no part files")
	}
	out := map[string]int64{}
	for _, p := range parts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if line == "" {
				continue
			}
			w, c, ok := strings.Cut(line, "\t")
			n, err := strconv.ParseInt(c, 10, 64)
			if !ok || err != nil {
				t.Fatalf("bad output line %q", line)
			}
			if _, dup := out[w]; dup {
				t.Fatalf("word %q written twice", w)
			}
			out[w] = n
		}
	}
	return out
}

func TestWordCountMatchesAnIndependentCount(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	os.MkdirAll(filepath.Join(in, "sub"), 0o755)
	texts := []string{genText(r, 4000), genText(r, 3000), genText(r, 10)}
	for i, text := range texts {
		name := filepath.Join(in, fmt.Sprintf("f%d.txt", i))
		if i == 2 {
			name = filepath.Join(in, "sub", "last.txt")
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(in, "_ignored"), []byte("ignored ignored"), 0o644)
	want := independent(texts...)
	out := filepath.Join(dir, "out")
	fc := localContext(t, "flint.files.maxPartitionBytes", "1000")
	res, err := wordcount.Count(context.Background(), fc, wordcount.Options{Paths: []string{in}, Top: 7, Output: out, Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := readOutput(t, out); !maps.Equal(got, want) {
		t.Fatalf("output has %d words, want %d: %v", len(got), len(want), diff(got, want))
	}
	if wantTop := topOf(want, 7); fmt.Sprint(res.Top) != fmt.Sprint(wantTop) {
		t.Fatalf("top = %v, want %v", res.Top, wantTop)
	}
	var total int64
	for _, c := range want {
		total += c
	}
	if res.Words != total || res.Distinct != int64(len(want)) {
		t.Fatalf("totals %d words %d distinct, want %d and %d", res.Words, res.Distinct, total, len(want))
	}
	var buf bytes.Buffer
	wordcount.Print(&buf, res)
	if !strings.HasPrefix(buf.String(), fmt.Sprintf("%d words, %d distinct\n%8d  %s\n", total, len(want), res.Top[0].Count, res.Top[0].Word)) {
		t.Fatalf("printed %q", buf.String())
	}
	// A glob over the same files, the sample when no path is given.
	res2, err := wordcount.Count(context.Background(), fc, wordcount.Options{Paths: []string{filepath.Join(in, "f*.txt")}, Top: 3})
	if err != nil {
		t.Fatal(err)
	}
	if wantTop := topOf(independent(texts[0], texts[1]), 3); fmt.Sprint(res2.Top) != fmt.Sprint(wantTop) {
		t.Fatalf("glob top = %v, want %v", res2.Top, wantTop)
	}
}

func diff(got, want map[string]int64) string {
	for w, c := range want {
		if got[w] != c {
			return fmt.Sprintf("%q: got %d, want %d", w, got[w], c)
		}
	}
	for w, c := range got {
		if _, ok := want[w]; !ok {
			return fmt.Sprintf("%q: got %d, want none", w, c)
		}
	}
	return ""
}

func TestWordsTokenizer(t *testing.T) {
	var got []string
	wordcount.Words("Don't STOP--me now, Ünïcode 42x ½", func(w string) { got = append(got, w) })
	if want := "[don't stop me now ünïcode 42x]"; fmt.Sprint(got) != want {
		t.Fatalf("words %v, want %s", got, want)
	}
}

func TestCheckRefusesMissingInputs(t *testing.T) {
	if err := wordcount.Check([]string{"/no/such/file.txt"}); err == nil || err.Error() != "wordcount: input file /no/such/file.txt does not exist" {
		t.Fatalf("Check: %v", err)
	}
	if err := wordcount.Check([]string{"/no/such/*.txt"}); err == nil || !strings.Contains(err.Error(), "matches no file") {
		t.Fatalf("Check glob: %v", err)
	}
	if err := wordcount.Check([]string{"--top", "-1"}); err == nil {
		t.Fatal("negative --top accepted")
	}
}

// referenceWords is the tokenizer's definition, rune by rune.
func referenceWords(line string) []string {
	var out []string
	start := -1
	for i, r := range line {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, strings.ToLower(line[start:i]))
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, strings.ToLower(line[start:]))
	}
	return out
}

// Words' ASCII fast path splits every line as the rune-by-rune
// definition does, Unicode and invalid UTF-8 included.
func FuzzWordsMatchesTheDefinition(f *testing.F) {
	for _, s := range []string{"Don't STOP--me now, Ünïcode 42x ½", "a\xffb\xc3", "ÀÉÎ'õü 日本語 x_y-z", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		var got []string
		wordcount.Words(line, func(w string) { got = append(got, w) })
		if want := referenceWords(line); !slices.Equal(got, want) {
			t.Fatalf("Words(%q) = %q, want %q", line, got, want)
		}
	})
}
