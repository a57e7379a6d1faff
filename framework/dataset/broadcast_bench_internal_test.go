package dataset

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/uri/fileserver"
)

// BenchmarkBroadcastFirstValue is the bytes path of a broadcast from
// NewBroadcast on the driver to the first Value on an executor, over
// loopback: encode with the record codec, write s2 chunks with their
// SHA-256s, publish on the driver's file server (which hashes the file),
// fetch it over HTTP into a file, read and verify the chunks, decode.
// raw-fetch is the baseline in the same run: the same value's bytes
// written as they are, published and fetched the same way, read back.
// Neither includes task scheduling. The value is a []byte of 4-bit
// random symbols (compressible about 2:1).
func BenchmarkBroadcastFirstValue(b *testing.B) {
	srv, tok := benchServer(b)
	for _, size := range []int{1 << 20, 16 << 20, 64 << 20} {
		v := randomBytes(size, uint64(size))
		dir := b.TempDir()
		b.Run(fmt.Sprintf("broadcast/%dMiB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(size))
			codec := recordcodec.For[[]byte]()
			defer cpuPerOp(b, size)()
			for i := range b.N {
				raw, err := codec.Append(nil, v)
				if err != nil {
					b.Fatal(err)
				}
				p := filepath.Join(dir, fmt.Sprintf("bc-%d.fbc", i))
				if err := os.WriteFile(p, encodeChunks(raw, broadcastChunk), 0o600); err != nil {
					b.Fatal(err)
				}
				enc := fetchServed(b, srv, tok, p, dir)
				got, err := decodeChunks(enc)
				if err != nil {
					b.Fatal(err)
				}
				val, err := codec.Decode(got)
				if err != nil || len(val) != size {
					b.Fatalf("decoded %d bytes, %v", len(val), err)
				}
			}
		})
		b.Run(fmt.Sprintf("raw-fetch/%dMiB", size>>20), func(b *testing.B) {
			b.SetBytes(int64(size))
			defer cpuPerOp(b, size)()
			for i := range b.N {
				p := filepath.Join(dir, fmt.Sprintf("raw-%d", i))
				if err := os.WriteFile(p, v, 0o600); err != nil {
					b.Fatal(err)
				}
				if got := fetchServed(b, srv, tok, p, dir); !bytes.Equal(got[:16], v[:16]) || len(got) != size {
					b.Fatalf("fetched %d bytes", len(got))
				}
			}
		})
	}
}

// cpuPerOp reports the process's user + sys CPU time per op (cpu-ms/op)
// and MB per CPU second: on a shared machine the wall time says little.
func cpuPerOp(b *testing.B, size int) func() {
	start := cpuTime()
	return func() {
		d := cpuTime() - start
		b.ReportMetric(float64(d.Milliseconds())/float64(b.N), "cpu-ms/op")
		if b.N > 0 && d > 0 {
			b.ReportMetric(float64(b.N)*float64(size)/1e6/d.Seconds(), "MB/cpu-s")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchServer(b *testing.B) (*fileserver.Server, string) {
	tok := fileserver.NewToken()
	srv, err := fileserver.New(fileserver.Config{Token: tok})
	if err != nil {
		b.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Serve(lis); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close(context.Background()) })
	return srv, tok
}

// fetchServed publishes p, fetches it into a file in dir as an executor
// does, and reads that copy back.
func fetchServed(b *testing.B, srv *fileserver.Server, tok, p, dir string) []byte {
	fu, err := srv.AddFile(p)
	if err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequest("GET", fu.URL, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("GET %s: %s", fu.URL, resp.Status)
	}
	f, err := os.CreateTemp(dir, "fetched-")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		b.Fatal(err)
	}
	f.Close()
	defer os.Remove(f.Name())
	defer os.Remove(p)
	out, err := os.ReadFile(f.Name())
	if err != nil {
		b.Fatal(err)
	}
	return out
}
