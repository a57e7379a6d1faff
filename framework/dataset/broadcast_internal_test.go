package dataset

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/sirupsen/logrus"

	"bytes"
	"crypto/sha256"
	"errors"
	"github.com/flint-mesos/flint/framework"
	_ "github.com/flint-mesos/flint/framework/local"
	"math/rand/v2"
	"testing"
)

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(r.IntN(16)) // compressible, not trivially
	}
	return out
}

func TestBroadcastChunksRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 999, 1000, 1001, 5000} {
		raw := randomBytes(n, uint64(n))
		enc := encodeChunks(raw, 1000)
		got, err := decodeChunks(enc)
		if err != nil || !bytes.Equal(got, raw) {
			t.Fatalf("%d bytes: decoded %d bytes, %v", n, len(got), err)
		}
	}
}

// A damaged byte inside a chunk's compressed data is found by the chunk's
// checksum and named: chunk 3 of 5.
func TestBroadcastCorruptChunkIsNamed(t *testing.T) {
	raw := randomBytes(5000, 1)
	enc := encodeChunks(raw, 1000)
	// find chunk 3's data: after the header and two chunks
	off := len(broadcastMagic) + 1
	for range 2 {
		off = skipChunk(t, enc, off)
	}
	_, compLen := chunkHeader(t, enc, off)
	data := off + headerLen(enc, off) + sha256.Size
	bad := bytes.Clone(enc)
	bad[data+compLen/2] ^= 0x40
	_, err := decodeChunks(bad)
	if !errors.Is(err, errCorruptBroadcast) || !strings.Contains(err.Error(), "chunk 3 of 5: SHA-256 mismatch") {
		t.Fatalf("corrupt chunk: %v, want chunk 3 of 5's SHA-256 mismatch", err)
	}
	if _, err := decodeChunks(enc[:len(enc)-1]); !errors.Is(err, errCorruptBroadcast) || !strings.Contains(err.Error(), "chunk 5 of 5: truncated") {
		t.Fatalf("truncated file: %v", err)
	}
	if _, err := decodeChunks(append(bytes.Clone(enc), 0)); !errors.Is(err, errCorruptBroadcast) {
		t.Fatalf("trailing byte: %v", err)
	}
	if _, err := decodeChunks([]byte("FLINTBC0")); !errors.Is(err, errCorruptBroadcast) {
		t.Fatalf("bad magic: %v", err)
	}
}

func headerLen(enc []byte, off int) int {
	n := 0
	for range 2 {
		for enc[off+n]&0x80 != 0 {
			n++
		}
		n++
	}
	return n
}

func chunkHeader(t *testing.T, enc []byte, off int) (int, int) {
	t.Helper()
	var vals [2]int
	p := off
	for i := range vals {
		shift := 0
		for {
			c := enc[p]
			p++
			vals[i] |= int(c&0x7f) << shift
			if c&0x80 == 0 {
				break
			}
			shift += 7
		}
	}
	return vals[0], vals[1]
}

func skipChunk(t *testing.T, enc []byte, off int) int {
	_, compLen := chunkHeader(t, enc, off)
	return off + headerLen(enc, off) + sha256.Size + compLen
}

// FuzzBroadcastChunks: any input decodes or fails with
// errCorruptBroadcast, never panics; valid files round-trip.
func FuzzBroadcastChunks(f *testing.F) {
	f.Add(encodeChunks([]byte("hello, broadcast"), 4))
	f.Add(encodeChunks(nil, 4))
	f.Add([]byte(broadcastMagic + "\xff\xff\xff\xff\x0f"))
	f.Fuzz(func(t *testing.T, enc []byte) {
		raw, err := decodeChunks(enc)
		if err != nil {
			if !errors.Is(err, errCorruptBroadcast) {
				t.Fatalf("error %v does not wrap errCorruptBroadcast", err)
			}
			return
		}
		again, err := decodeChunks(encodeChunks(raw, 4))
		if err != nil || !bytes.Equal(again, raw) {
			t.Fatalf("re-encoded value did not round-trip: %v", err)
		}
	})
}

// seen by the body below on the driver: the broadcast's file before and
// after Destroy
var destroyFiles = map[string][3]bool{}

var destroyReleases = Job("test.broadcast-destroy-releases", func(b *Builder, key string) error {
	bc := NewBroadcast(b, "x")
	n, err := Count(Filter(Range(b, 0, 8, 2), func(int64) bool { return bc.Value() == "x" }))
	if err != nil || n != 8 {
		return fmt.Errorf("count %d, %v; want 8", n, err)
	}
	if b.Driver() {
		p := filepath.Join(bc.dir, bc.meta.Name)
		_, before := os.Stat(p)
		bc.Destroy()
		_, after := os.Stat(p)
		destroyFiles[key] = [3]bool{before == nil, errors.Is(after, fs.ErrNotExist), !b.fc.RemoveFile(bc.meta.Name)}
	}
	return nil
})

// Destroy removes the driver's file (the file server answers 410 Gone for
// a file whose source is gone: uri's TestServer… status test).
func TestBroadcastDestroyRemovesTheDriversFile(t *testing.T) {
	cfg := framework.NewConfig()
	if err := cfg.Set("flint.master", "local[2]"); err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Stop(context.Background())
	if _, err := destroyReleases.Run(context.Background(), fc, t.Name()); err != nil {
		t.Fatal(err)
	}
	if got := destroyFiles[t.Name()]; got != [3]bool{true, true, true} {
		t.Fatalf("file present before Destroy, gone after, no longer added: %v, want [true true true]", got)
	}
}

var corruptErr = map[string]string{}

// corrupted flips one byte inside the broadcast's first chunk on the
// driver after it was added, before any task fetched it.
var corrupted = Job("test.broadcast-corrupted", func(b *Builder, key string) error {
	v := "value"
	if b.Driver() {
		v = string(randomBytes(3<<20, 5))
	}
	bc := NewBroadcast(b, v)
	if b.Driver() {
		p := filepath.Join(bc.dir, bc.meta.Name)
		enc, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		enc[len(enc)/4] ^= 1
		if err := os.WriteFile(p, enc, 0o600); err != nil {
			return err
		}
		corruptErr[key] = bc.meta.Name
	}
	_, err := Count(Filter(Range(b, 0, 4, 2), func(int64) bool { return len(bc.Value()) > 0 }))
	return err
})

// A broadcast damaged after it was published fails its tasks with an
// error naming the file and the checksum mismatch; no task reads it.
func TestCorruptBroadcastFailsTheAction(t *testing.T) {
	cfg := framework.NewConfig()
	for k, v := range map[string]string{"flint.master": "local[2]", "flint.task.maxFailures": "1"} {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Stop(context.Background())
	_, err = corrupted.Run(context.Background(), fc, t.Name())
	name := corruptErr[t.Name()]
	t.Logf("error: %v", err)
	if err == nil || name == "" || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "SHA-256 mismatch") {
		t.Fatalf("action over a corrupt broadcast %q: %v, want an error naming it and its SHA-256 mismatch", name, err)
	}
}
