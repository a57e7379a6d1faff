package uri_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/uri"
)

func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "#!/bin/sh\necho hello\n")
	}))
	defer srv.Close()
	tmp, err := os.MkdirTemp("", "sandbox")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	cache, err := uri.NewCache(filepath.Join(tmp, "cache"), 1<<30)
	if err != nil {
		log.Fatal(err)
	}
	f := uri.New(uri.Config{Cache: cache, MaxDownloadBytes: 1 << 30})
	yes, name := true, "bin/hello"
	uris := []mesos.CommandInfo_URI{{Value: srv.URL + "/hello.sh", Executable: &yes, Cache: &yes, OutputFile: &name}}
	for _, sandbox := range []string{"task-1", "task-2"} {
		res, err := f.Fetch(context.Background(), uris, filepath.Join(tmp, sandbox))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: %s, %d bytes, cache hit %v\n", sandbox, res[0].Path, res[0].Bytes, res[0].CacheHit)
	}
	// Output:
	// task-1: bin/hello, 21 bytes, cache hit false
	// task-2: bin/hello, 21 bytes, cache hit true
}

func ExampleExtract() {
	dir, err := os.MkdirTemp("", "extract")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// A "tar slip": an entry named ../escape.
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "../escape", Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
	tw.Write([]byte("x"))
	tw.Close()
	archive := filepath.Join(dir, "slip.tar")
	if err := os.WriteFile(archive, buf.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	err = uri.Extract(archive, filepath.Join(dir, "out"), uri.Limits{MaxBytes: 1 << 20})
	fmt.Println(errors.Is(err, uri.ErrUnsafeArchive))
	fmt.Println(err)
	// Output:
	// true
	// uri: extract slip.tar: unsafe archive: entry "../escape": path leaves the destination
}
