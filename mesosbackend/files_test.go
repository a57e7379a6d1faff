package mesosbackend

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
)

// An added file the job removes (Context.RemoveFile → UnserveFile) is
// refused to the executor holding a grant for it with 410 Gone, although
// the driver's local file is still there.
func TestUnservedFileIsGone(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	fs, _, err := ServeExecutor("", "", Addr{Host: "127.0.0.1"}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close(context.Background())
	a := AddedFiles{Server: fs}
	u, sum, size, err := a.ServeFile(writeFile(t, "flint-broadcast-r-0.fbc", "chunks"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := a.FileToken("e1", []*backend.File{{Name: "flint-broadcast-r-0.fbc", URI: u, SHA256: sum, Size: size, Served: true}})
	if err != nil {
		t.Fatal(err)
	}
	status := func() int {
		t.Helper()
		resp, err := http.Get(u + "?token=" + tok)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status(); got != 200 {
		t.Fatalf("before UnserveFile: %d, want 200", got)
	}
	if !a.UnserveFile(u) {
		t.Fatal("UnserveFile of a served file reported false")
	}
	if got := status(); got != 410 {
		t.Fatalf("after UnserveFile: %d, want 410 Gone", got)
	}
	var _ backend.FileUnserver = a
}
