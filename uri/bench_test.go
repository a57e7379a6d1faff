package uri

import (
	"context"
	"crypto/rand"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// BenchmarkFetch10MiB fetches a 10 MiB file over loopback HTTP: "miss"
// downloads it every time (no cache), "hit" copies it from the cache.
// Run: go test -run=NONE -bench=Fetch10MiB -benchtime=50x ./uri
func BenchmarkFetch10MiB(b *testing.B) {
	body := make([]byte, 10<<20)
	rand.Read(body)
	srv := newFileServer(b, map[string][]byte{"/blob.bin": body})
	uris := []mesos.CommandInfo_URI{mkURI(srv.URL+"/blob.bin", cached())}
	run := func(b *testing.B, f *Fetcher, wantHit bool) {
		b.SetBytes(int64(len(body)))
		b.ResetTimer()
		for range b.N {
			b.StopTimer()
			sandbox := b.TempDir()
			b.StartTimer()
			res, err := f.Fetch(context.Background(), uris, sandbox)
			if err != nil {
				b.Fatal(err)
			}
			if res[0].CacheHit != wantHit || res[0].Bytes != int64(len(body)) {
				b.Fatalf("result %+v", res[0])
			}
		}
	}
	b.Run("miss", func(b *testing.B) { run(b, New(Config{}), false) })
	b.Run("hit", func(b *testing.B) {
		c, err := NewCache(b.TempDir(), 64<<20)
		if err != nil {
			b.Fatal(err)
		}
		f := New(Config{Cache: c})
		if _, err := f.Fetch(context.Background(), uris, b.TempDir()); err != nil {
			b.Fatal(err)
		}
		run(b, f, true)
	})
}
