// Package wordcount counts words: the driver splits input files into chunks
// at line boundaries, one task counts the words of each chunk, and the
// driver merges the counts.
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
	"strings"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/flint-mesos/flint/framework"
)

// Usage documents the example's arguments.
const Usage = "wordcount [--top N] [--split-size BYTES] [files...] (no files: a bundled sample text)"

//go:embed sample.txt
var sampleText []byte

// Chunk is one task's input: a run of whole lines from a file.
type Chunk struct {
	Source string
	Text   string
}

// Count counts the words of a chunk.
var Count = framework.Register("examples.wordcount.count", count)

func count(ctx context.Context, c Chunk) (map[string]int64, error) {
	counts := map[string]int64{}
	for _, w := range strings.FieldsFunc(c.Text, notWordRune) {
		counts[strings.ToLower(w)]++
	}
	return counts, ctx.Err()
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) && r != '\'' }

// Split cuts text into chunks of at most size bytes at line boundaries; a
// longer line is a chunk of its own.
func Split(source string, text []byte, size int) []Chunk {
	var chunks []Chunk
	var cur bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), len(text)+1)
	for sc.Scan() {
		line := sc.Bytes()
		if cur.Len() > 0 && cur.Len()+len(line)+1 > size {
			chunks = append(chunks, Chunk{Source: source, Text: cur.String()})
			cur.Reset()
		}
		cur.Write(line)
		cur.WriteByte('\n')
	}
	if cur.Len() > 0 {
		chunks = append(chunks, Chunk{Source: source, Text: cur.String()})
	}
	return chunks
}

// WordCount is a word and how often it occurs.
type WordCount struct {
	Word  string
	Count int64
}

// Run counts the words of chunks on fc and returns them by descending count.
func Run(ctx context.Context, fc *framework.Context, chunks []Chunk) ([]WordCount, error) {
	parts, err := framework.Map(ctx, fc, Count, chunks, framework.WithJobName("wordcount"))
	if err != nil {
		return nil, err
	}
	total := map[string]int64{}
	for _, p := range parts {
		for w, n := range p {
			total[w] += n
		}
	}
	out := make([]WordCount, 0, len(total))
	for w, n := range total {
		out = append(out, WordCount{Word: w, Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Word < out[j].Word
	})
	return out, nil
}

// Main is the driver: it prints the most frequent words.
func Main(ctx context.Context, fc *framework.Context, args []string) error {
	fs := pflag.NewFlagSet("wordcount", pflag.ContinueOnError)
	top := fs.Int("top", 20, "how many words to print")
	split := fs.Int("split-size", 512, "chunk size in bytes (one task per chunk)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("wordcount: %w; usage: %s", err, Usage)
	}
	if *split < 1 {
		return fmt.Errorf("wordcount: --split-size must be positive, got %d", *split)
	}
	chunks, err := readChunks(fs.Args(), *split)
	if err != nil {
		return err
	}
	counts, err := Run(ctx, fc, chunks)
	if err != nil {
		return err
	}
	return printTop(os.Stdout, counts, *top, len(chunks))
}

func readChunks(files []string, split int) ([]Chunk, error) {
	if len(files) == 0 {
		return Split("sample.txt", sampleText, split), nil
	}
	var chunks []Chunk
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("wordcount: %w", err)
		}
		chunks = append(chunks, Split(f, b, split)...)
	}
	return chunks, nil
}

func printTop(w io.Writer, counts []WordCount, top, tasks int) error {
	var words int64
	for _, c := range counts {
		words += c.Count
	}
	fmt.Fprintf(w, "%d words, %d distinct, counted by %d tasks\n", words, len(counts), tasks)
	for i, c := range counts {
		if i == top {
			break
		}
		if _, err := fmt.Fprintf(w, "%8d  %s\n", c.Count, c.Word); err != nil {
			return err
		}
	}
	return nil
}
