package filescheck

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
)

// CheckRemoteChecksums runs the remote-checksum scenario on fc with tasks
// tasks per job: a remote URL added with #sha256=<its digest> reaches the
// tasks (the server never sees the fragment); the same again is accepted,
// another digest under its name is refused with ErrFileConflict, a digest
// that is not one is refused; a remote file whose content is not the
// digest given fails the job that needs it, naming the file and the
// mismatch, and, once removed, later jobs run again.
func CheckRemoteChecksums(t testing.TB, fc *framework.Context, tasks int) {
	t.Helper()
	good := "summed " + fmt.Sprint(time.Now().UnixNano())
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch r.URL.Path {
		case "/pub/sum.txt":
			fmt.Fprint(w, good)
		case "/pub/bad.txt":
			fmt.Fprint(w, "not what was added")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	goodURL := srv.URL + "/pub/sum.txt#sha256=" + sha256Hex(good)
	if err := fc.AddFile(goodURL); err != nil {
		t.Fatal(err)
	}
	if err := fc.AddFile(goodURL); err != nil {
		t.Fatalf("the same URL and digest again: %v", err)
	}
	if err := fc.AddFile(srv.URL + "/pub/sum.txt#sha256=" + sha256Hex("other")); !errors.Is(err, framework.ErrFileConflict) {
		t.Fatalf("sum.txt with another digest: %v, want ErrFileConflict", err)
	}
	if err := fc.AddFile(srv.URL + "/pub/x.txt#sha256=abc"); err == nil || !strings.Contains(err.Error(), "not a SHA-256") {
		t.Fatalf("a digest that is none: %v, want it refused", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	in := make([][]string, tasks)
	for i := range in {
		in[i] = []string{"sum.txt"}
	}
	readAll := func() {
		t.Helper()
		got, err := framework.Map(ctx, fc, Read, in)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range got {
			if s.Contents["sum.txt"] != good || len(s.Errors) != 0 {
				t.Fatalf("task %d: sum.txt has %q (errors %v), want %q", i, s.Contents["sum.txt"], s.Errors, good)
			}
		}
	}
	readAll()
	if hits.Load() == 0 {
		t.Fatal("the remote server saw no fetch")
	}

	if err := fc.AddFile(srv.URL + "/pub/bad.txt#sha256=" + sha256Hex("what was added")); err != nil {
		t.Fatal(err)
	}
	_, err := framework.Map(ctx, fc, Read, in)
	if err == nil || !strings.Contains(err.Error(), `"bad.txt"`) || !strings.Contains(err.Error(), "SHA-256 mismatch") ||
		!strings.Contains(err.Error(), sha256Hex("not what was added")) {
		t.Fatalf("a job with a remote file of other content: %v, want it failed naming bad.txt and the SHA-256 mismatch", err)
	}
	if !fc.RemoveFile("bad.txt") {
		t.Fatal("RemoveFile(bad.txt) found no such file")
	}
	readAll()
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
