package shuffle_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shuffleblock"
)

// sortedBlock encodes records (sorted here) as one block.
func sortedBlock(t *testing.T, rs []rec) []byte {
	t.Helper()
	rs = sortAll(rs)
	var buf bytes.Buffer
	w := shuffleblock.NewWriter(&buf, shuffleblock.S2, 512)
	for _, r := range rs {
		if err := w.Append([]byte(r.k), []byte(r.v)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestExternalMergeOfManyBlocksInPassesCombining(t *testing.T) {
	ints := recordcodec.For[int64]()
	one, _ := ints.Append(nil, 1)
	want := map[string]int64{}
	var streams []shuffle.Stream
	for b := range 37 {
		var rs []rec
		seen := map[string]bool{}
		for _, r := range randomRecords(uint64(b), 300, 400) {
			if !seen[r.k] { // a map output has each key once after combine
				seen[r.k] = true
				rs = append(rs, rec{r.k, string(one)})
				want[r.k]++
			}
		}
		streams = append(streams, shuffleblock.NewReader(bytes.NewReader(sortedBlock(t, rs))))
	}
	dir := t.TempDir()
	m, err := shuffle.ExternalMerge(streams, shuffle.ByteOrder, shuffle.CombineBytes(ints, func(a, b int64) int64 { return a + b }), 4, dir, shuffleblock.S2)
	if err != nil {
		t.Fatal(err)
	}
	if m.Passes < 9 {
		t.Fatalf("37 blocks at fan-in 4 merged in %d intermediate runs", m.Passes)
	}
	got := map[string]int64{}
	prev := ""
	for kv, err := range shuffle.Records(m, recordcodec.For[string](), ints) {
		if err != nil {
			t.Fatal(err)
		}
		if kv.Key <= prev {
			t.Fatalf("%q after %q", kv.Key, prev)
		}
		prev = kv.Key
		got[kv.Key] = kv.Value
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("merged counts differ: %d keys, want %d", len(got), len(want))
	}
	m.Close()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("intermediate runs left: %v", left)
	}
}

func TestExternalMergeReportsACorruptStream(t *testing.T) {
	good := sortedBlock(t, []rec{{"a", "1"}, {"b", "2"}})
	bad := bytes.Clone(good)
	bad[len(bad)-1] ^= 1
	m, err := shuffle.ExternalMerge([]shuffle.Stream{shuffleblock.NewReader(bytes.NewReader(good)), shuffleblock.NewReader(bytes.NewReader(bad))}, shuffle.ByteOrder, nil, 8, t.TempDir(), shuffleblock.S2)
	if err == nil {
		_, _, err = m.Next()
		m.Close()
	}
	if !errors.Is(err, shuffleblock.ErrChecksum) {
		t.Fatalf("merge over a flipped byte: %v", err)
	}
}

// mountTmpfs mounts a tmpfs of size bytes, as root only.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.Itoa(size)); err != nil {
		t.Skipf("cannot mount a tmpfs to fill (needs root): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			out, _ := exec.Command("umount", "-l", dir).CombinedOutput()
			t.Errorf("unmount %s: %v %s", dir, err, out)
		}
	})
	return dir
}

func TestDiskFullDuringSpillNamesTheDirectory(t *testing.T) {
	dir := mountTmpfs(t, 256<<10)
	s, err := shuffle.OpenStore(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := shuffle.NewWriter(shuffle.Config{Store: s, ShuffleID: 9, Partitions: 4, Order: shuffle.ByteOrder, Compression: shuffleblock.None, Memory: shuffle.NewMemory(64 << 10).Task()})
	if err != nil {
		t.Fatal(err)
	}
	var addErr error
	for i := 0; i < 1_000_000 && addErr == nil; i++ {
		k := fmt.Sprintf("%09d", i)
		addErr = w.Add(i%4, []byte(k), bytes.Repeat([]byte(k), 8))
	}
	if addErr == nil {
		_, addErr = w.Commit()
	}
	if !errors.Is(addErr, syscall.ENOSPC) || !strings.Contains(addErr.Error(), filepath.Join(s.Root(), "shuffle_9")) {
		t.Fatalf("filling a 256 KiB tmpfs: %v, want ENOSPC naming the directory", addErr)
	}
	t.Logf("the error: %v", addErr)
	w.Abort()
	left, _ := os.ReadDir(filepath.Join(s.Root(), "shuffle_9"))
	if len(left) != 0 {
		t.Fatalf("spills left after Abort: %v", left)
	}
	// The freed space works again.
	res := writeAll(t, shuffle.Config{Store: s, ShuffleID: 9, Partitions: 4, Order: shuffle.ByteOrder, Memory: shuffle.NewMemory(1 << 20).Task()}, []rec{{"a", "b"}})
	if !slices.ContainsFunc(res.Sizes, func(n uint64) bool { return n > 0 }) {
		t.Fatal("no output after the disk was freed")
	}
}
