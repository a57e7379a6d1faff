package fileserver

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/flint-mesos/flint/internal/redact"
	"github.com/flint-mesos/flint/uri"
)

// startServer serves a new Server on a loopback port until the test ends.
func startServer(t testing.TB, mod func(*Config)) (*Server, string) {
	t.Helper()
	cfg := Config{Token: NewToken()}
	if mod != nil {
		mod(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(lis); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return s, cfg.Token
}

// testClient returns an HTTP client whose idle connections close with the test.
func testClient(t testing.TB) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// do sends method to rawURL (its fragment dropped) with optional header
// pairs and returns the response and its body.
func do(t testing.TB, c *http.Client, method, rawURL string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, strings.SplitN(rawURL, "#", 2)[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

func bearer(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

func sha(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func tokenFetcher(t testing.TB, s *Server, tok string, cache *uri.Cache) *uri.Fetcher {
	t.Helper()
	h, err := TokenHeader(s.URL(), tok)
	if err != nil {
		t.Fatal(err)
	}
	return uri.New(uri.Config{Header: h, Cache: cache})
}

func TestServerFetchThroughFetcher(t *testing.T) {
	logger, hook := logtest.NewNullLogger()
	logger.SetLevel(logrus.DebugLevel)
	s, tok := startServer(t, func(c *Config) { c.Logger = logger })
	body := randomBytes(1<<20 + 17)
	fu, err := s.AddFile(writeTemp(t, t.TempDir(), "app data.bin", body))
	if err != nil {
		t.Fatal(err)
	}
	want := s.URL() + "/files/" + sha(body) + "/app%20data.bin"
	if fu.URL != want || fu.Name != "app data.bin" || fu.SHA256 != sha(body) || fu.Size != int64(len(body)) {
		t.Fatalf("FileURL %+v, want URL %s", fu, want)
	}
	cache, err := uri.NewCache(t.TempDir(), 16<<20)
	if err != nil {
		t.Fatal(err)
	}
	f := tokenFetcher(t, s, tok, cache)
	for i, wantHit := range []bool{false, true} {
		sandbox := t.TempDir()
		res, err := f.Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(fu.URL, cached(), output(fu.Name))}, sandbox)
		if err != nil {
			t.Fatal(err)
		}
		if res[0].CacheHit != wantHit || res[0].Path != "app data.bin" || res[0].Bytes != fu.Size {
			t.Fatalf("fetch %d: %+v", i, res[0])
		}
		if got := readString(t, filepath.Join(sandbox, "app data.bin")); got != string(body) {
			t.Fatalf("fetch %d: content differs", i)
		}
	}
	gets := 0
	for _, e := range hook.AllEntries() {
		if e.Message == "request" && e.Data["method"] == "GET" && e.Data["status"] == 200 {
			gets++
		}
	}
	if gets != 1 {
		t.Fatalf("server answered %d GETs, want 1 (second fetch is a cache hit)", gets)
	}
	// Without the token the fetcher is refused.
	_, err = uri.New(uri.Config{}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(fu.URL)}, t.TempDir())
	if !errors.Is(err, uri.ErrHTTPStatus) || !strings.Contains(err.Error(), "401") {
		t.Fatalf("err = %v, want HTTP 401", err)
	}
}

func TestServerAuth(t *testing.T) {
	var logs bytes.Buffer
	logger := logrus.New()
	logger.SetOutput(&logs)
	logger.SetLevel(logrus.DebugLevel)
	s, tok := startServer(t, func(c *Config) { c.Logger = logger })
	fu, err := s.AddFile(writeTemp(t, t.TempDir(), "a.txt", []byte("hello")))
	if err != nil {
		t.Fatal(err)
	}
	wrongTok := NewToken()
	c := testClient(t)
	u := strings.SplitN(fu.URL, "#", 2)[0]
	for _, tc := range []struct {
		name, url string
		header    []string
		status    int
		challenge string
	}{
		{"no token", u, nil, 401, `Bearer realm="flint"`},
		{"wrong bearer", u, bearer(wrongTok), 401, `Bearer realm="flint", error="invalid_token"`},
		{"token prefix", u, bearer(tok[:40]), 401, `Bearer realm="flint", error="invalid_token"`},
		{"basic auth", u, []string{"Authorization", "Basic " + tok}, 401, `Bearer realm="flint", error="invalid_token"`},
		{"wrong query", u + "?token=" + wrongTok, nil, 401, `Bearer realm="flint", error="invalid_token"`},
		{"bearer", u, bearer(tok), 200, ""},
		{"bearer lower case", u, []string{"Authorization", "bearer " + tok}, 200, ""},
		{"query", u + "?x=1&token=" + tok, nil, 200, ""},
		{"wrong bearer, right query", u + "?token=" + tok, bearer(wrongTok), 200, ""},
		{"401 before 404", s.URL() + "/files/nothing", nil, 401, `Bearer realm="flint"`},
		{"401 before 405", u, []string{"X-Method", "DELETE"}, 401, `Bearer realm="flint"`},
	} {
		method := http.MethodGet
		if len(tc.header) == 2 && tc.header[0] == "X-Method" {
			method = tc.header[1]
		}
		resp, body := do(t, c, method, tc.url, tc.header...)
		if resp.StatusCode != tc.status || resp.Header.Get("WWW-Authenticate") != tc.challenge {
			t.Errorf("%s: %d %q, want %d %q", tc.name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tc.status, tc.challenge)
		}
		if tc.status == 200 && string(body) != "hello" {
			t.Errorf("%s: body %q", tc.name, body)
		}
	}
	if strings.Contains(logs.String(), tok) || strings.Contains(logs.String(), wrongTok) || strings.Contains(logs.String(), tok[:40]) {
		t.Fatalf("a token was logged:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "token="+redact.Mask) || !strings.Contains(logs.String(), "status=401") {
		t.Fatalf("requests not logged with the query redacted:\n%s", logs.String())
	}

	anon, _ := startServer(t, func(c *Config) { c.Token, c.AllowAnonymous = "", true })
	fa, err := anon.AddFile(writeTemp(t, t.TempDir(), "b.txt", []byte("open")))
	if err != nil {
		t.Fatal(err)
	}
	if resp, body := do(t, c, "GET", fa.URL); resp.StatusCode != 200 || string(body) != "open" {
		t.Fatalf("anonymous: %d %q", resp.StatusCode, body)
	}
}

func TestServerConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "Token is required"},
		{Config{Token: NewToken(), AllowAnonymous: true}, "exclusive"},
		{Config{Token: "short"}, "at least 16"},
		{Config{Token: "0123456789abcdef 0123"}, "printable ASCII"},
		{Config{Token: NewToken(), AdvertiseHost: "http://x/"}, "AdvertiseHost"},
		{Config{Token: NewToken(), AdvertiseHost: "driver:8080"}, "AdvertiseHost"},
	} {
		_, err := New(tc.cfg)
		errContains(t, err, "uri: server:", tc.want)
	}
	// Close before Serve: Serve is then refused and closes the listener.
	s, err := New(Config{Token: NewToken()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Serve(lis); !errors.Is(err, ErrClosed) {
		t.Fatalf("Serve after Close: %v", err)
	}
	if _, err := lis.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("listener not closed: %v", err)
	}
	a, b := NewToken(), NewToken()
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(a) || a == b {
		t.Fatalf("NewToken: %q, %q", a, b)
	}
}

func TestServerAdvertiseHost(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		listen, advertise, wantHost string
	}{
		{"127.0.0.1:0", "", "127.0.0.1"},
		{"0.0.0.0:0", "", host},
		{"127.0.0.1:0", "driver.example", "driver.example"},
		{"127.0.0.1:0", "[::1]", "[::1]"},
	} {
		s, err := New(Config{Token: NewToken(), AdvertiseHost: tc.advertise})
		if err != nil {
			t.Fatal(err)
		}
		if s.URL() != "" {
			t.Fatalf("URL before Serve: %q", s.URL())
		}
		if _, err := s.AddFile(writeTemp(t, t.TempDir(), "f", nil)); err == nil || !strings.Contains(err.Error(), "Serve") {
			t.Fatalf("AddFile before Serve: %v", err)
		}
		lis, err := net.Listen("tcp", tc.listen)
		if err != nil {
			t.Fatal(err)
		}
		port := fmt.Sprint(lis.Addr().(*net.TCPAddr).Port)
		if err := s.Serve(lis); err != nil {
			t.Fatal(err)
		}
		if want := "http://" + tc.wantHost + ":" + port; s.URL() != want {
			t.Errorf("%s %q: URL %q, want %q", tc.listen, tc.advertise, s.URL(), want)
		}
		lis2, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Serve(lis2); err == nil {
			t.Fatal("second Serve accepted")
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTokenHeader(t *testing.T) {
	h, err := TokenHeader("http://Driver.example:8080", "tok")
	if err != nil {
		t.Fatal(err)
	}
	for raw, want := range map[string]string{
		"http://driver.example:8080/files/x":   "Bearer tok",
		"HTTP://DRIVER.EXAMPLE.:8080/files/x":  "Bearer tok",
		"http://driver.example/files/x":        "",
		"http://driver.example:8081/files/x":   "",
		"https://driver.example:8080/files/x":  "",
		"http://evil.example:8080/files/x":     "",
		"http://driver.example.evil:8080/x":    "",
		"http://sub.driver.example:8080/files": "",
	} {
		u, _ := url.Parse(raw)
		got := h(u)
		if got.Get("Authorization") != want {
			t.Errorf("%s: Authorization %q, want %q", raw, got.Get("Authorization"), want)
		}
		if _, ok := got["Authorization"]; want == "" && (!ok || len(got["Authorization"]) != 0) {
			t.Errorf("%s: no empty Authorization entry to clear a copied one: %v", raw, got)
		}
	}
	h80, err := TokenHeader("http://driver.example", "tok")
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse("http://driver.example:80/f"); h80(u).Get("Authorization") != "Bearer tok" {
		t.Error("default port not matched")
	}
	for _, bad := range []string{"driver:8080", "ftp://driver/", "http://", "http://[::1"} {
		if _, err := TokenHeader(bad, "tok"); !errors.Is(err, uri.ErrInvalidURI) {
			t.Errorf("%q: err = %v, want ErrInvalidURI", bad, err)
		}
	}
	if _, err := TokenHeader("http://driver", ""); err == nil {
		t.Error("empty token accepted")
	}
}

// TestTokenOnlyToServer fetches through redirects between the file server
// and other servers on the same host name (other ports): only the file
// server ever sees the token.
func TestTokenOnlyToServer(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{} // server → Authorization seen
	note := func(who string, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen[who] += r.Header.Get("Authorization")
	}
	s, tok := startServer(t, nil)
	fu, err := s.AddFile(writeTemp(t, t.TempDir(), "tool", []byte("v1")))
	if err != nil {
		t.Fatal(err)
	}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		note("other", r)
		if r.URL.Path == "/to-server" {
			http.Redirect(w, r, strings.SplitN(fu.URL, "#", 2)[0], http.StatusFound)
			return
		}
		fmt.Fprint(w, "elsewhere")
	}))
	defer other.Close()
	// A stand-in at the token's origin that redirects away (same host, other port).
	standIn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		note("standIn", r)
		http.Redirect(w, r, other.URL+"/away", http.StatusFound)
	}))
	defer standIn.Close()

	f := tokenFetcher(t, s, tok, nil)
	if _, err := f.Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(other.URL + "/to-server")}, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	h, err := TokenHeader(standIn.URL, tok)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uri.New(uri.Config{Header: h}).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(standIn.URL + "/start")}, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["other"] != "" || seen["standIn"] != "Bearer "+tok {
		t.Fatalf("Authorization seen: %q", seen)
	}
}

func TestServerRangesHeadConditional(t *testing.T) {
	s, tok := startServer(t, nil)
	body := randomBytes(1000)
	path := writeTemp(t, t.TempDir(), "r.bin", body)
	fu, err := s.AddFile(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	c := testClient(t)
	auth := bearer(tok)
	check := func(name string, resp *http.Response, got []byte, status int, want []byte) {
		t.Helper()
		if resp.StatusCode != status || !bytes.Equal(got, want) {
			t.Errorf("%s: %d, %d bytes; want %d, %d bytes", name, resp.StatusCode, len(got), status, len(want))
		}
	}
	resp, got := do(t, c, "GET", fu.URL, append(auth, "Range", "bytes=10-19")...)
	check("range", resp, got, 206, body[10:20])
	if cr := resp.Header.Get("Content-Range"); cr != "bytes 10-19/1000" {
		t.Errorf("Content-Range %q", cr)
	}
	resp, got = do(t, c, "GET", fu.URL, append(auth, "Range", "bytes=-5")...)
	check("suffix range", resp, got, 206, body[995:])
	resp, got = do(t, c, "GET", fu.URL, append(auth, "Range", "bytes=990-")...)
	check("open range", resp, got, 206, body[990:])
	resp, _ = do(t, c, "GET", fu.URL, append(auth, "Range", "bytes=2000-3000")...)
	check("unsatisfiable", resp, nil, 416, nil)
	resp, got = do(t, c, "GET", fu.URL, append(auth, "Range", "bytes=0-1,5-6")...)
	if resp.StatusCode != 206 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "multipart/byteranges") ||
		!bytes.Contains(got, body[0:2]) || !bytes.Contains(got, body[5:7]) {
		t.Errorf("multi-range: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}

	resp, got = do(t, c, "HEAD", fu.URL, auth...)
	check("HEAD", resp, got, 200, nil)
	h := resp.Header
	if h.Get("Content-Length") != "1000" || h.Get("Content-Type") != "application/octet-stream" ||
		h.Get("ETag") != `"`+fu.SHA256+`"` || h.Get("Last-Modified") != info.ModTime().UTC().Format(http.TimeFormat) ||
		h.Get("Accept-Ranges") != "bytes" || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("HEAD headers %v", h)
	}
	resp, got = do(t, c, "GET", fu.URL, append(auth, "If-None-Match", `"`+fu.SHA256+`"`)...)
	check("If-None-Match", resp, got, 304, nil)
	resp, got = do(t, c, "GET", fu.URL, append(auth, "If-None-Match", `"other"`)...)
	check("If-None-Match other", resp, got, 200, body)
	resp, got = do(t, c, "GET", fu.URL, append(auth, "If-Modified-Since", h.Get("Last-Modified"))...)
	check("If-Modified-Since", resp, got, 304, nil)
	resp, got = do(t, c, "GET", fu.URL, append(auth, "Range", "bytes=0-9", "If-Range", `"stale"`)...)
	check("If-Range stale", resp, got, 200, body)
	resp, got = do(t, c, "GET", fu.URL, append(auth, "Range", "bytes=0-9", "If-Range", `"`+fu.SHA256+`"`)...)
	check("If-Range current", resp, got, 206, body[:10])

	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
		resp, _ := do(t, c, m, fu.URL, auth...)
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %d, Allow %q", m, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
}

// rawGet sends a request line exactly as given and returns the status.
func rawGet(t *testing.T, addr, target, tok string) int {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n", target, addr, tok)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s: %v", target, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestServerNotFoundAndTraversal(t *testing.T) {
	s, tok := startServer(t, nil)
	dir := t.TempDir()
	writeTemp(t, dir, "secret", []byte("not published"))
	fu, err := s.AddFile(writeTemp(t, dir, "pub", []byte("published")))
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(s.URL(), "http://")
	good := "/files/" + fu.SHA256 + "/pub"
	if code := rawGet(t, addr, good, tok); code != 200 {
		t.Fatalf("%s: %d", good, code)
	}
	for _, target := range []string{
		"/", "/files", "/files/", "/files/" + fu.SHA256, "/files/" + fu.SHA256 + "/",
		"/files/" + fu.SHA256 + "/secret", "/files/" + sha([]byte("x")) + "/pub", "/files/" + fu.SHA256 + "/pub/",
		"/files/../../etc/passwd", "/files/../../../../../../etc/passwd",
		"/files/%2e%2e/%2e%2e/etc/passwd", "/files/..%2f..%2fetc%2fpasswd", "/files/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
		"/files/..%5c..%5cetc%5cpasswd", "/files/%252e%252e/etc/passwd",
		"/files/" + fu.SHA256 + "/../" + fu.SHA256 + "/pub", "/files/" + fu.SHA256 + "/./pub",
		"/files//" + fu.SHA256 + "/pub", "//files/" + fu.SHA256 + "/pub", "/files/" + fu.SHA256 + "/%2e%2e/secret",
		"/files/" + fu.SHA256 + "/pub%00", "/files/" + fu.SHA256 + "/pub?x=/../secret",
		"/files/" + dir + "/secret", "/files//etc/passwd", "/files/" + fu.SHA256 + "/..%2fsecret",
	} {
		want := 404
		if strings.HasSuffix(target, "?x=/../secret") {
			want = 200 // the query is not part of the name
		}
		if code := rawGet(t, addr, target, tok); code != want {
			t.Errorf("%s: %d, want %d", target, code, want)
		}
	}
}

func TestServerChangedFileRefused(t *testing.T) {
	s, tok := startServer(t, nil)
	c := testClient(t)
	dir := t.TempDir()
	f := tokenFetcher(t, s, tok, nil)
	fetch := func(u string) error {
		_, err := f.Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(u)}, t.TempDir())
		return err
	}
	add := func(name, content string) (string, FileURL) {
		p := writeTemp(t, dir, name, []byte(content))
		fu, err := s.AddFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := fetch(fu.URL); err != nil {
			t.Fatal(err)
		}
		return p, fu
	}
	status := func(fu FileURL) int {
		resp, _ := do(t, c, "GET", fu.URL, bearer(tok)...)
		return resp.StatusCode
	}

	// Only the size changes (the modification time is put back).
	p, fu := add("grow", "1234")
	info, _ := os.Stat(p)
	if err := os.WriteFile(p, []byte("12345"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, time.Time{}, info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if code := status(fu); code != 409 {
		t.Errorf("grown: %d", code)
	}
	if err := fetch(fu.URL); !errors.Is(err, uri.ErrHTTPStatus) || !strings.Contains(err.Error(), "409") {
		t.Errorf("grown: fetch err %v", err)
	}
	// Re-adding publishes the new content under a new URL; the old one stays refused.
	fu2, err := s.AddFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if fu2.URL == fu.URL || fu2.SHA256 != sha([]byte("12345")) || fetch(fu2.URL) != nil || status(fu) != 409 {
		t.Errorf("re-added: %+v (old %+v)", fu2, fu)
	}

	// Same size, new modification time.
	p, fu = add("edit", "abcd")
	info, _ = os.Stat(p)
	if err := os.WriteFile(p, []byte("ABCD"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, time.Time{}, info.ModTime().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if code := status(fu); code != 409 {
		t.Errorf("edited: %d", code)
	}

	// Replaced by another file with the same size and modification time.
	p, fu = add("swap", "same")
	info, _ = os.Stat(p)
	q := writeTemp(t, dir, "swap.new", []byte("SAME"))
	if err := os.Chtimes(q, time.Time{}, info.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(q, p); err != nil {
		t.Fatal(err)
	}
	if code := status(fu); code != 409 {
		t.Errorf("replaced: %d", code)
	}

	// Removed.
	p, fu = add("gone", "bye")
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if code := status(fu); code != 410 {
		t.Errorf("removed: %d", code)
	}
	if err := fetch(fu.URL); !errors.Is(err, uri.ErrNotFound) {
		t.Errorf("removed: fetch err %v", err)
	}
}

func TestServerDuplicates(t *testing.T) {
	s, tok := startServer(t, nil)
	c := testClient(t)
	a := writeTemp(t, t.TempDir(), "lib.jar", []byte("content"))
	b := writeTemp(t, t.TempDir(), "lib.jar", []byte("content"))
	other := writeTemp(t, t.TempDir(), "copy.jar", []byte("content"))
	fa, err := s.AddFile(a)
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.AddFile(a)
	if err != nil {
		t.Fatal(err)
	}
	if again != fa || s.hashed.Load() != 1 {
		t.Fatalf("re-add: %+v vs %+v, %d hashes", again, fa, s.hashed.Load())
	}
	fb, err := s.AddFile(b)
	if err != nil {
		t.Fatal(err)
	}
	fo, err := s.AddFile(other)
	if err != nil {
		t.Fatal(err)
	}
	if fb != fa || fo.URL == fa.URL || fo.SHA256 != fa.SHA256 {
		t.Fatalf("same content: %+v %+v %+v", fa, fb, fo)
	}
	// The name is still served while one of its files is unchanged.
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	if resp, body := do(t, c, "GET", fa.URL, bearer(tok)...); resp.StatusCode != 200 || string(body) != "content" {
		t.Fatalf("after removing one copy: %d %q", resp.StatusCode, body)
	}

	for _, bad := range []string{t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
		if _, err := s.AddFile(bad); err == nil || !strings.HasPrefix(err.Error(), "uri: add") {
			t.Errorf("AddFile(%s): %v", bad, err)
		}
	}
}

func TestServerAddExecutable(t *testing.T) {
	s, tok := startServer(t, nil)
	fu, err := s.AddExecutable()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, err = filepath.EvalSymlinks(exe)
	if err != nil {
		t.Fatal(err)
	}
	content, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if fu.SHA256 != sha(content) || fu.Size != int64(len(content)) || !strings.HasSuffix(fu.URL, "/"+url.PathEscape(filepath.Base(exe))) || fu.Name != filepath.Base(exe) {
		t.Fatalf("FileURL %+v for %s", fu, exe)
	}
	again, err := s.AddExecutable()
	if err != nil || again != fu || s.hashed.Load() != 1 {
		t.Fatalf("second AddExecutable: %+v, %v, %d hashes", again, err, s.hashed.Load())
	}
	sandbox := t.TempDir()
	res, err := tokenFetcher(t, s, tok, nil).Fetch(context.Background(), []mesos.CommandInfo_URI{mkURI(fu.URL, executable())}, sandbox)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(sandbox, res[0].Path))
	if err != nil || sha(got) != fu.SHA256 || perm(t, filepath.Join(sandbox, res[0].Path)) != 0o755 {
		t.Fatalf("fetched executable: %v, sha %s", err, sha(got))
	}
}

func TestFetchErrorsNeverShowTheQueryToken(t *testing.T) {
	const token = "query-token-0123456789abcdef"
	f := uri.New(uri.Config{})
	for _, raw := range []string{
		"http://127.0.0.1:1/files/x?token=" + token,                    // connection refused: the client quotes the URL
		"http://127.0.0.1:1/files/x?a=1&token=" + token + "#sha256=00", // with other parameters and a fragment
	} {
		_, err := f.Fetch(context.Background(), []mesos.CommandInfo_URI{{Value: raw}}, t.TempDir())
		if err == nil {
			t.Fatalf("fetch of %s succeeded", raw)
		}
		if strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "token="+redact.Mask) {
			t.Fatalf("error shows the token or hides nothing: %v", err)
		}
	}
}
