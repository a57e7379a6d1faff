package fileserver

import (
	"testing"
	"time"
)

// Remove stops serving a file although its local source is unchanged:
// requests get 410 Gone (not 404, which means never published), a grant
// listing it opens nothing, and adding the same content again serves it
// again under the same URL.
func TestServerRemoveAnswersGone(t *testing.T) {
	s, tok := startServer(t, nil)
	c := testClient(t)
	p := writeTemp(t, t.TempDir(), "chunks with space.fbc", []byte("broadcast chunks"))
	fu, err := s.AddFile(p)
	if err != nil {
		t.Fatal(err)
	}
	grant, err := s.Grant("files/e1", time.Hour, fu)
	if err != nil {
		t.Fatal(err)
	}
	status := func(token string) int {
		resp, _ := do(t, c, "GET", fu.URL, bearer(token)...)
		return resp.StatusCode
	}
	if code := status(tok); code != 200 {
		t.Fatalf("before Remove: %d, want 200", code)
	}
	if !s.Remove(fu.URL) {
		t.Fatal("Remove of a served URL reported false")
	}
	if code := status(tok); code != 410 {
		t.Errorf("after Remove, with the server's token: %d, want 410", code)
	}
	if code := status(grant); code != 410 {
		t.Errorf("after Remove, with the grant: %d, want 410", code)
	}
	if s.Remove(fu.URL) {
		t.Error("a second Remove reported true")
	}
	if resp, _ := do(t, c, "GET", s.URL()+"/files/"+sha([]byte("never"))+"/x", bearer(tok)...); resp.StatusCode != 404 {
		t.Errorf("a never published name: %d, want 404", resp.StatusCode)
	}
	again, err := s.AddFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if again.URL != fu.URL || status(tok) != 200 {
		t.Errorf("added again: %s (was %s), status %d, want the same URL served (200)", again.URL, fu.URL, status(tok))
	}
}
