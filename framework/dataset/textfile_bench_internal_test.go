package dataset

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/storage"
)

// BenchmarkTextSplitLines is TextFile's per-line cost apart from the network: the lines of a
// 64 MiB local file of 91-byte lines (page cache), read as 4 parts (3 starting mid-file) into
// batches of strings that a count takes, as TextFile+Count's task does. The S3 scan of
// docs/benchmarks.md pays this beside its GETs.
func BenchmarkTextSplitLines(b *testing.B) {
	line := strings.Repeat("abcdefghij", 9) + "\n"
	const size = 64 << 20
	body := strings.Repeat(line, size/len(line))
	p := filepath.Join(b.TempDir(), "lines.txt")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	fi := storage.FileInfo{Path: p, Size: int64(len(body))}
	var splits []fileSplit
	for i := range int64(4) {
		splits = append(splits, fileSplit{Parts: []filePart{{File: fi, Start: fi.Size * i / 4, End: fi.Size * (i + 1) / 4}}})
	}
	want := int64(len(body) / len(line))
	b.SetBytes(fi.Size)
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		var n, read int64
		for _, s := range splits {
			err := readTextSplit(nil, s, func(lines []string) error {
				n += int64(len(lines))
				return nil
			}, func(k int64) { read += k })
			if err != nil {
				b.Fatal(err)
			}
		}
		if n != want || read != fi.Size {
			b.Fatalf("%d lines of %d bytes, want %d of %d", n, read, want, fi.Size)
		}
	}
	b.ReportMetric((processCPU()-cpu).Seconds()/float64(b.N)*float64(1<<30)/float64(fi.Size), "cpu-s/GiB")
}

// processCPU is the CPU (user+sys) the process used so far, the GC's included: on a loaded
// machine it moves far less than the wall clock.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
