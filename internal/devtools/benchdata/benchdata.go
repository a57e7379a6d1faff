// Package benchdata generates the inputs of the dataset benchmarks
// (docs/benchmarks.md, scripts/bench-datasets.sh) and runs their
// single-threaded Go baseline. The flint binary runs it as a hidden
// subcommand:
//
//	flint benchdata text    -size 1g  > words.txt   # lines of words, a Zipf-like vocabulary
//	flint benchdata records -size 2g  > recs.txt    # 100-byte lines like gensort -a's
//	flint benchdata kv      -size 1g -seed 1 > left.tsv   # key<TAB>value lines
//	flint benchdata count words.txt                 # one goroutine, map[string]int
//
// Output is deterministic for a size and seed.
package benchdata

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/flint-mesos/flint/examples/wordcount"
)

// Usage is the command line Run takes.
const Usage = "text|records|kv -size N [-seed S] [-keys K] | count FILE"

// ErrUsage is wrapped by Run's errors about its command line.
var ErrUsage = errors.New("usage: " + Usage)

// Run runs one benchdata command (args[0]: text, records, kv or count),
// writing its output to out.
func Run(args []string, out io.Writer) error {
	if len(args) == 0 {
		return ErrUsage
	}
	cmd, args := args[0], args[1:]
	if cmd == "count" {
		if len(args) != 1 {
			return fmt.Errorf("count needs one file: %w", ErrUsage)
		}
		return count(args[0], out)
	}
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	size := fs.String("size", "64m", "bytes to write (k, m, g suffixes)")
	seed := fs.Uint64("seed", 1, "random seed")
	keys := fs.Int("keys", 1<<20, "distinct keys (kv)")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%s: %w (%w)", cmd, err, ErrUsage)
	}
	n, err := parseSize(*size)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(out, 1<<20)
	r := rand.New(rand.NewPCG(*seed, 99))
	switch cmd {
	case "text":
		err = text(w, r, n)
	case "records":
		err = records(w, r, n)
	case "kv":
		err = kv(w, r, n, *keys)
	default:
		return fmt.Errorf("unknown command %q: %w", cmd, ErrUsage)
	}
	if err != nil {
		return err
	}
	return w.Flush()
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "g"):
		mult, s = 1<<30, strings.TrimSuffix(s, "g")
	case strings.HasSuffix(s, "m"):
		mult, s = 1<<20, strings.TrimSuffix(s, "m")
	case strings.HasSuffix(s, "k"):
		mult, s = 1<<10, strings.TrimSuffix(s, "k")
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return v * mult, nil
}

// text writes lines of about 10 words drawn from a 50,000-word
// vocabulary with Zipf-distributed frequencies, mixed case and
// punctuation.
func text(w *bufio.Writer, r *rand.Rand, n int64) error {
	z := rand.NewZipf(r, 1.1, 2, 49999)
	var written int64
	for written < n {
		words := 6 + r.IntN(9)
		for i := range words {
			id := z.Uint64()
			word := "w" + strconv.FormatUint(id, 36)
			if id%7 == 0 {
				word = strings.ToUpper(word[:1]) + word[1:]
			}
			sep := " "
			switch {
			case i == words-1:
				sep = ".\n"
			case id%11 == 0:
				sep = ", "
			}
			k, _ := w.WriteString(word)
			m, _ := w.WriteString(sep)
			written += int64(k + m)
		}
	}
	return nil
}

const printable = " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"

// records writes 100-byte lines as gensort -a does: a 10-byte printable
// key, two spaces, the record number in 32 hex digits, two spaces and
// filler, ending in a newline.
func records(w *bufio.Writer, r *rand.Rand, n int64) error {
	var line [100]byte
	for i := int64(0); (i+1)*100 <= n; i++ {
		for j := range 10 {
			line[j] = printable[r.IntN(len(printable))]
		}
		copy(line[10:], fmt.Sprintf("  %032X  ", i))
		for j := 46; j < 99; j++ {
			line[j] = "0123456789ABCDEF"[(int(i)+j)%16]
		}
		line[99] = '\n'
		if _, err := w.Write(line[:]); err != nil {
			return err
		}
	}
	return nil
}

// kv writes key<TAB>value lines with uniformly drawn keys.
func kv(w *bufio.Writer, r *rand.Rand, n int64, keys int) error {
	var written int64
	for i := 0; written < n; i++ {
		l := fmt.Sprintf("k%08d\tv%d-%016x\n", r.IntN(keys), i, r.Uint64())
		k, err := w.WriteString(l)
		if err != nil {
			return err
		}
		written += int64(k)
	}
	return nil
}

// count is the single-threaded baseline: the wordcount example's
// tokenizer into a map[string]int, printing the word and distinct counts.
func count(path string, out io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	words := 0
	for sc.Scan() {
		wordcount.Words(sc.Text(), func(w string) { counts[w]++; words++ })
	}
	if err := sc.Err(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%d words, %d distinct\n", words, len(counts))
	return err
}
