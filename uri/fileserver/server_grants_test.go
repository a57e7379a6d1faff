package fileserver

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeNow is a settable clock for grant deadlines.
type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeNow) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeNow) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// A grant opens exactly its files, for its owner, until its deadline or
// Revoke; it never opens another file, and the server's own token keeps
// working throughout.
func TestServerGrant(t *testing.T) {
	clock := &fakeNow{t: time.Unix(1_000_000, 0)}
	s, tok := startServer(t, func(c *Config) { c.Now = clock.now })
	exe, err := s.AddFile(writeTemp(t, t.TempDir(), "flint", []byte("the executor")))
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.AddFile(writeTemp(t, t.TempDir(), "secret.conf", []byte("other")))
	if err != nil {
		t.Fatal(err)
	}
	c := testClient(t)
	get := func(u, token string) int {
		t.Helper()
		resp, _ := do(t, c, "GET", u+"?token="+token)
		return resp.StatusCode
	}
	g1, err := s.Grant("exec-1", time.Minute, exe)
	if err != nil {
		t.Fatal(err)
	}
	g2, err := s.Grant("exec-2", time.Minute, exe)
	if err != nil {
		t.Fatal(err)
	}
	if g1 == tok || g2 == tok || g1 == g2 || len(g1) != len(tok) {
		t.Fatalf("grant tokens %q %q must be fresh, distinct and as long as the server token", g1, g2)
	}
	if again, err := s.Grant("exec-1", time.Minute, exe); err != nil || again != g1 {
		t.Fatalf("a live grant's owner got %q, %v; want the same token", again, err)
	}
	if code := get(exe.URL, g1); code != 200 {
		t.Fatalf("grant on its file: %d", code)
	}
	if code := get(other.URL, g1); code != 401 {
		t.Fatalf("grant on another file: %d, want 401", code)
	}
	if !s.Revoke("exec-1") || s.Revoke("exec-1") {
		t.Fatal("Revoke: want true once, then false")
	}
	if code := get(exe.URL, g1); code != 401 {
		t.Fatalf("revoked grant: %d, want 401", code)
	}
	if code := get(exe.URL, g2); code != 200 {
		t.Fatalf("another executor's grant after a revoke: %d", code)
	}
	clock.add(time.Minute)
	if code := get(exe.URL, g2); code != 401 || s.Grants() != 0 {
		t.Fatalf("expired grant: %d with %d grants live, want 401 and none", code, s.Grants())
	}
	if code := get(other.URL, tok); code != 200 {
		t.Fatalf("server token: %d", code)
	}
	if fresh, err := s.Grant("exec-1", time.Minute, exe); err != nil || fresh == g1 {
		t.Fatalf("a grant after revocation reuses the old token (%v)", err)
	}
}

func TestServerGrantRefuses(t *testing.T) {
	s, _ := startServer(t, nil)
	fu, err := s.AddFile(writeTemp(t, t.TempDir(), "a", []byte("a")))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := startServer(t, nil)
	foreign, err := other.AddFile(writeTemp(t, t.TempDir(), "b", []byte("b")))
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() (string, error){
		"no owner":        func() (string, error) { return s.Grant("", time.Minute, fu) },
		"no ttl":          func() (string, error) { return s.Grant("e", 0, fu) },
		"no file":         func() (string, error) { return s.Grant("e", time.Minute) },
		"foreign file":    func() (string, error) { return s.Grant("e", time.Minute, foreign) },
		"made-up FileURL": func() (string, error) { return s.Grant("e", time.Minute, FileURL{URL: fu.URL}) },
	} {
		if tok, err := call(); err == nil || tok != "" || !strings.HasPrefix(err.Error(), "uri: grant") {
			t.Errorf("%s: %q, %v; want a uri: grant error", name, tok, err)
		}
	}
}
