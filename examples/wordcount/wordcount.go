// Package wordcount counts words with datasets: the executors read the
// input files (byte-range splits aligned to lines), split lines into
// words and count them with ReduceByKey (combined map-side before the
// shuffle); the driver gets only the top words, and with --output every
// count is written as part files by the executors.
//
// A word is a maximal run of letters, digits and apostrophes, lower-cased
// (unicode.IsLetter, unicode.IsDigit, '\”).
package wordcount

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"github.com/flint-mesos/flint/examples/exampleutil"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
)

// Usage documents the example's arguments.
const Usage = "wordcount [--top N] [--output DIR] [--partitions N] [PATH...] (files, directories, globs; none: a bundled sample text)"

//go:embed sample.txt
var sampleText string

// Options are a word count's inputs.
type Options struct {
	Paths      []string // read on the executors; empty: the bundled sample
	Top        int      // words returned, most frequent first
	Output     string   // when set, every "word\tcount" line is written under it
	Partitions int      // reduce partitions (0: flint.default.parallelism)
}

// WordCount is a word and how often it occurs.
type WordCount struct {
	Word  string
	Count int64
}

// Result is what a count returns to the driver.
type Result struct {
	Words, Distinct int64
	Top             []WordCount
}

// Words calls yield for every word of line.
func Words(line string, yield func(string)) {
	start := -1
	for i := 0; i < len(line); {
		c, n := line[i], 1
		var in bool
		if c < utf8.RuneSelf {
			in = asciiWord[c] // the common case: no rune decoding, no table search
		} else {
			var r rune
			r, n = utf8.DecodeRuneInString(line[i:])
			in = unicode.IsLetter(r) || unicode.IsDigit(r)
		}
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			yield(strings.ToLower(line[start:i]))
			start = -1
		}
		i += n
	}
	if start >= 0 {
		yield(strings.ToLower(line[start:]))
	}
}

// asciiWord marks the ASCII bytes words are made of: letters, digits and
// the apostrophe.
var asciiWord = func() (t [utf8.RuneSelf]bool) {
	for c := range t {
		t[c] = unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)) || c == '\''
	}
	return t
}()

// Before orders counts: count descending, then word ascending.
func Before(a, b WordCount) bool {
	if a.Count != b.Count {
		return a.Count > b.Count
	}
	return a.Word < b.Word
}

// Job is the word count as a dataset job.
var Job = dataset.JobResult("examples.wordcount", func(b *dataset.Builder, o Options) (Result, error) {
	var lines dataset.Dataset[string]
	if len(o.Paths) == 0 {
		lines = dataset.Parallelize(b, strings.Split(strings.TrimSuffix(sampleText, "\n"), "\n"), 0)
	} else {
		lines = dataset.TextFile(b, o.Paths...)
	}
	words := dataset.FlatMap(lines, func(l string, yield func(dataset.KV[string, int64])) {
		Words(l, func(w string) { yield(dataset.KV[string, int64]{Key: w, Value: 1}) })
	})
	counts := dataset.ReduceByKey(words, func(x, y int64) int64 { return x + y }, o.Partitions)
	if o.Output != "" {
		lines := dataset.Map(counts, func(kv dataset.KV[string, int64]) string { return kv.Key + "\t" + strconv.FormatInt(kv.Value, 10) })
		if err := dataset.SaveAsTextFile(lines, o.Output); err != nil {
			return Result{}, err
		}
	}
	// Each partition's top words and totals, merged on the driver.
	tops := dataset.MapPartitions(counts, func(_ int, recs func(func(dataset.KV[string, int64]) bool), yield func(Result)) error {
		var r Result
		recs(func(kv dataset.KV[string, int64]) bool {
			r.Words += kv.Value
			r.Distinct++
			r.Top = keepTop(append(r.Top, WordCount{kv.Key, kv.Value}), o.Top)
			return true
		})
		yield(r)
		return nil
	})
	parts, err := dataset.Collect(tops)
	if err != nil {
		return Result{}, err
	}
	var res Result
	for _, p := range parts {
		res.Words += p.Words
		res.Distinct += p.Distinct
		res.Top = keepTop(append(res.Top, p.Top...), o.Top)
	}
	return res, nil
})

// keepTop sorts and trims to n once the slice has grown past 2n+1.
func keepTop(ws []WordCount, n int) []WordCount {
	if len(ws) <= 2*n+1 {
		return ws
	}
	sort.Slice(ws, func(i, j int) bool { return Before(ws[i], ws[j]) })
	if len(ws) > n {
		ws = ws[:n]
	}
	return ws
}

// Count runs the word count on fc.
func Count(ctx context.Context, fc *framework.Context, o Options) (Result, error) {
	if o.Top < 0 {
		return Result{}, fmt.Errorf("wordcount: --top must not be negative, got %d", o.Top)
	}
	r, err := Job.Run(ctx, fc, o)
	sort.Slice(r.Top, func(i, j int) bool { return Before(r.Top[i], r.Top[j]) })
	if len(r.Top) > o.Top {
		r.Top = r.Top[:o.Top]
	}
	return r, err
}

func parseArgs(args []string) (Options, error) {
	fs := pflag.NewFlagSet("wordcount", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var o Options
	fs.IntVar(&o.Top, "top", 20, "how many words to print")
	fs.StringVar(&o.Output, "output", "", "write every word<TAB>count line as part files under this directory")
	fs.IntVar(&o.Partitions, "partitions", 0, "reduce partitions (default flint.default.parallelism)")
	if err := fs.Parse(args); err != nil {
		return o, fmt.Errorf("wordcount: %w; usage: %s", err, Usage)
	}
	if o.Top < 0 || o.Partitions < 0 {
		return o, fmt.Errorf("wordcount: --top and --partitions must not be negative")
	}
	o.Paths = fs.Args()
	return o, nil
}

// Check validates the arguments and that every input exists, so that a
// mistake fails before any cluster starts.
func Check(args []string) error {
	o, err := parseArgs(args)
	if err != nil {
		return err
	}
	return exampleutil.CheckInputs("wordcount", o.Paths, o.Output)
}

// Main is the driver: it prints the most frequent words.
func Main(ctx context.Context, fc *framework.Context, args []string) error {
	o, err := parseArgs(args)
	if err != nil {
		return err
	}
	r, err := Count(ctx, fc, o)
	if err != nil {
		return err
	}
	return Print(os.Stdout, r)
}

// Print writes the totals and the top words.
func Print(w io.Writer, r Result) error {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "%d words, %d distinct\n", r.Words, r.Distinct)
	for _, c := range r.Top {
		fmt.Fprintf(&buf, "%8d  %s\n", c.Count, c.Word)
	}
	bw := bufio.NewWriter(w)
	bw.Write(buf.Bytes())
	return bw.Flush()
}
