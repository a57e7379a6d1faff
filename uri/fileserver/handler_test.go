package fileserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

// The handler answers the same paths wherever it runs: an added file is
// served through an httptest server with the server's token, and refused
// without it.
func TestHandlerServesUnderHTTPTest(t *testing.T) {
	s, tok := startServer(t, nil)
	fu, err := s.AddFile(writeTemp(t, t.TempDir(), "data.txt", []byte("content")))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	u, err := url.Parse(fu.URL)
	if err != nil {
		t.Fatal(err)
	}
	get := func(token string) (int, string) {
		req, err := http.NewRequest(http.MethodGet, ts.URL+u.Path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, string(b)
	}
	if code, body := get(tok); code != http.StatusOK || body != "content" {
		t.Fatalf("with the token: %d %q, want 200 \"content\"", code, body)
	}
	if code, _ := get(""); code != http.StatusUnauthorized {
		t.Fatalf("without a token: %d, want 401", code)
	}
}
