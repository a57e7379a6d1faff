package runcases_test

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// Spark's WholeTextFileRecordReaderSuite and FileSuite's binaryFiles cases, in every mode.

type wholeCaseArgs struct {
	Dir    string // WholeTextFiles' input: plain and gzip files
	BinDir string // BinaryFiles' input
}

type wholeCaseOut struct {
	Text      map[string]string
	TextParts int
	Binary    map[string][]byte
	Cached    [][]byte // the cached values, mapped to bytes, collected twice
	Copies    [][]byte // each value three times through FlatMap
}

var wholeCaseJob = dataset.JobResult("runcases.wholefiles", func(b *dataset.Builder, a wholeCaseArgs) (wholeCaseOut, error) {
	var out wholeCaseOut
	text := dataset.WholeTextFiles(b, a.Dir, 3)
	out.TextParts = text.Partitions()
	kvs, err := dataset.Collect(text)
	if err != nil {
		return out, err
	}
	out.Text = map[string]string{}
	for _, kv := range kvs {
		out.Text[kv.Key] = kv.Value
	}
	bins := dataset.BinaryFiles(b, a.BinDir, 2)
	bkvs, err := dataset.Collect(bins)
	if err != nil {
		return out, err
	}
	out.Binary = map[string][]byte{}
	for _, kv := range bkvs {
		out.Binary[kv.Key] = kv.Value
	}
	// "portabledatastream caching tests": the values cached, then read twice.
	cached := dataset.Cache(dataset.Values(bins))
	for range 2 {
		vs, err := dataset.Collect(cached)
		if err != nil {
			return out, err
		}
		out.Cached = append(out.Cached, vs...)
	}
	// "portabledatastream flatmap tests": three copies of each value.
	out.Copies, err = dataset.Collect(dataset.FlatMap(dataset.Values(bins), func(v []byte, yield func([]byte)) {
		for range 3 {
			yield(bytes.Clone(v))
		}
	}))
	return out, err
})

func TestWholeTextAndBinaryFilesThreeModes(t *testing.T) {
	dir, binDir := t.TempDir(), t.TempDir()
	words := strings.Repeat("Spark is easy to use.\n", 50)
	wantText := map[string]string{}
	for i, n := range []int{10, 100, 1000} {
		p := filepath.Join(dir, "part-0000"+string(rune('0'+i)))
		writeFile(t, p, []byte(words[:n]))
		wantText[p] = words[:n]
		var gz bytes.Buffer
		w := gzip.NewWriter(&gz)
		w.Write([]byte(words[:n]))
		w.Close()
		writeFile(t, p+"-z.gz", gz.Bytes())
		wantText[p+"-z.gz"] = words[:n]
	}
	// FileSuite "binary file input as byte array": bytes 1..6, keyed by the full path.
	record := []byte{1, 2, 3, 4, 5, 6}
	wantBin := map[string][]byte{filepath.Join(binDir, "record-bytestream-00000.bin"): record,
		filepath.Join(binDir, "nul.bin"): {0, 0, 255, '\n'}}
	for p, data := range wantBin {
		writeFile(t, p, data)
	}
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		got, err := wholeCaseJob.Run(t.Context(), fc, wholeCaseArgs{Dir: dir, BinDir: binDir})
		if err != nil {
			t.Fatal(err)
		}
		if got.TextParts != 3 || len(got.Text) != len(wantText) {
			t.Fatalf("%d partitions, %d files; want 3 partitions, %d files", got.TextParts, len(got.Text), len(wantText))
		}
		for p, c := range wantText {
			if got.Text[p] != c {
				t.Fatalf("WholeTextFiles %s: %q, want %q", p, got.Text[p], c)
			}
		}
		if len(got.Binary) != len(wantBin) {
			t.Fatalf("BinaryFiles read %d files, want %d", len(got.Binary), len(wantBin))
		}
		for p, data := range wantBin {
			if !bytes.Equal(got.Binary[p], data) {
				t.Fatalf("BinaryFiles %s: %v, want %v", p, got.Binary[p], data)
			}
		}
		for _, want := range []struct {
			name   string
			got    [][]byte
			copies int
		}{{"cached, read twice", got.Cached, 2}, {"flatMap", got.Copies, 3}} {
			counts := map[string]int{}
			for _, v := range want.got {
				counts[string(v)]++
			}
			for _, data := range wantBin {
				if counts[string(data)] != want.copies {
					t.Fatalf("%s: %v seen %d times, want %d (%v)", want.name, data, counts[string(data)], want.copies, want.got)
				}
			}
			if len(want.got) != want.copies*len(wantBin) {
				t.Fatalf("%s: %d values, want %d", want.name, len(want.got), want.copies*len(wantBin))
			}
		}
	})
}

func writeFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
