package fileserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// BenchmarkServe64MiB downloads one 64 MiB file over loopback: from
// fileserver.Server ("server"), from net/http's FileServer serving the same file
// (the baseline, "http.FileServer"), and through the Fetcher from
// fileserver.Server into a sandbox with the #sha256 check ("server+fetcher").
// Run: go test -run=NONE -bench=Serve64MiB -benchtime=30x -count=3 ./uri
func BenchmarkServe64MiB(b *testing.B) {
	const size = 64 << 20
	dir := b.TempDir()
	path := writeTemp(b, dir, "blob.bin", randomBytes(size))
	s, tok := startServer(b, nil)
	fu, err := s.AddFile(path)
	if err != nil {
		b.Fatal(err)
	}
	plain := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer plain.Close()
	c := testClient(b)
	get := func(b *testing.B, url string, header ...string) {
		b.SetBytes(size)
		for b.Loop() {
			req, err := http.NewRequest(http.MethodGet, url, nil)
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i+1 < len(header); i += 2 {
				req.Header.Set(header[i], header[i+1])
			}
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || n != size || resp.StatusCode != http.StatusOK {
				b.Fatalf("%d: %d bytes, %v", resp.StatusCode, n, err)
			}
		}
	}
	b.Run("server", func(b *testing.B) { get(b, strings.SplitN(fu.URL, "#", 2)[0], bearer(tok)...) })
	b.Run("http.FileServer", func(b *testing.B) { get(b, plain.URL+"/blob.bin") })
	b.Run("server+fetcher", func(b *testing.B) {
		f := tokenFetcher(b, s, tok, nil)
		uris := []mesos.CommandInfo_URI{mkURI(fu.URL)}
		sandbox := b.TempDir()
		b.SetBytes(size)
		for b.Loop() {
			res, err := f.Fetch(context.Background(), uris, sandbox)
			if err != nil || res[0].Bytes != size {
				b.Fatal(res, err)
			}
			if err := os.Remove(filepath.Join(sandbox, "blob.bin")); err != nil {
				b.Fatal(err)
			}
		}
	})
}
