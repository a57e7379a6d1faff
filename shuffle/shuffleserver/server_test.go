package shuffleserver_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/tlspin"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shuffleserver"
	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const app = "app-1"

var token = shuffleserver.Token("secret-of-app-1", app)

func quiet() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// writeOutput commits map output (1, 0) with records in partitions 0 and 2.
func writeOutput(t *testing.T) *shuffle.Store {
	t.Helper()
	s, err := shuffle.OpenStore(t.TempDir() + "/store")
	if err != nil {
		t.Fatal(err)
	}
	w, err := shuffle.NewWriter(shuffle.Config{Store: s, ShuffleID: 1, Partitions: 3, Order: shuffle.ByteOrder, Memory: shuffle.NewMemory(1 << 20).Task()})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1000 {
		p := []int{0, 2}[i%2]
		if err := w.Add(p, []byte{byte(i), byte(i >> 8)}, bytes.Repeat([]byte("v"), i%100)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return s
}

// fileBlock is the bytes of a block read from the data file directly.
func fileBlock(t *testing.T, s *shuffle.Store, reduce int) []byte {
	t.Helper()
	b, err := s.OpenBlock(1, 0, reduce)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	out, err := io.ReadAll(b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func start(t *testing.T, s *shuffle.Store, tls bool) *shuffleserver.Server {
	t.Helper()
	srv, err := shuffleserver.Start(shuffleserver.Config{Store: s, AppID: app, Token: token, TLS: tls, Log: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func TestServesBlocksOverTLSAndPlaintext(t *testing.T) {
	s := writeOutput(t)
	for _, tls := range []bool{true, false} {
		srv := start(t, s, tls)
		addr := srv.Address()
		if got := addr.Pin != ""; got != tls {
			t.Fatalf("TLS %v: pin %q", tls, addr.Pin)
		}
		parsed, err := shuffleserver.ParseAddress(addr.String())
		if err != nil || parsed != addr {
			t.Fatalf("ParseAddress(%q) = %+v, %v", addr.String(), parsed, err)
		}
		if parsed.Dir != s.Root() {
			t.Fatalf("address names dir %q, store is %q", parsed.Dir, s.Root())
		}
		c := shuffleserver.NewClient(app, token, 10*time.Second)
		for r := range 3 {
			got, err := c.Fetch(context.Background(), parsed, 1, 0, r, []byte("pre"))
			if err != nil {
				t.Fatalf("TLS %v reduce %d: %v", tls, r, err)
			}
			if want := fileBlock(t, s, r); !bytes.Equal(got[3:], want) || string(got[:3]) != "pre" {
				t.Fatalf("TLS %v reduce %d: %d bytes, want %d", tls, r, len(got)-3, len(want))
			}
		}
		c.Close()
	}
}

func TestRefusesOtherCredentialsAndApplications(t *testing.T) {
	s := writeOutput(t)
	srv := start(t, s, true)
	addr := srv.Address()
	ctx := context.Background()
	for name, c := range map[string]*shuffleserver.Client{
		"another application's token": shuffleserver.NewClient(app, shuffleserver.Token("secret-of-app-2", "app-2"), time.Minute),
		"this app id, another secret": shuffleserver.NewClient(app, shuffleserver.Token("guess", app), time.Minute),
		"no token":                    shuffleserver.NewClient(app, "", time.Minute),
	} {
		_, err := c.Fetch(ctx, addr, 1, 0, 0, nil)
		var se *shuffleserver.StatusError
		if !errors.As(err, &se) || se.Code != http.StatusUnauthorized || se.Retryable() {
			t.Errorf("%s: %v, want 401", name, err)
		}
		c.Close()
	}
	// A valid token used for another application's path.
	other := shuffleserver.NewClient("app-2", token, time.Minute)
	defer other.Close()
	_, err := other.Fetch(ctx, addr, 1, 0, 0, nil)
	var se *shuffleserver.StatusError
	if !errors.As(err, &se) || se.Code != http.StatusForbidden {
		t.Errorf("another application's path: %v, want 403", err)
	}
	// A server with another certificate at the same address is refused.
	_, otherPin, _ := tlspin.Server("127.0.0.1", time.Hour)
	forged := addr
	forged.Pin = otherPin
	c := shuffleserver.NewClient(app, token, time.Minute)
	defer c.Close()
	if _, err := c.Fetch(ctx, forged, 1, 0, 0, nil); !errors.Is(err, tlspin.ErrPinMismatch) {
		t.Errorf("pinning another certificate: %v", err)
	}
}

func TestMissingOutputsAndBadRequests(t *testing.T) {
	s := writeOutput(t)
	srv := start(t, s, false)
	c := shuffleserver.NewClient(app, token, time.Minute)
	defer c.Close()
	ctx := context.Background()
	var se *shuffleserver.StatusError
	if _, err := c.Fetch(ctx, srv.Address(), 1, 7, 0, nil); !errors.As(err, &se) || se.Code != http.StatusNotFound || se.Retryable() {
		t.Fatalf("missing map output: %v", err)
	}
	if err := os.Truncate(s.DataPath(1, 0), 10); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Fetch(ctx, srv.Address(), 1, 0, 0, nil); !errors.As(err, &se) || se.Code != http.StatusInternalServerError || !strings.Contains(se.Message, "its index says") {
		t.Fatalf("truncated data file: %v", err)
	}
	for _, path := range []string{"/shuffle/v1/app-1/1/0", "/shuffle/v1/app-1/1/0/x", "/shuffle/v1/app-1/1/0/-1", "/shuffle/v1/app-1/1/0/01", "/other"} {
		req, _ := http.NewRequest(http.MethodGet, srv.Address().BaseURL()+path, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", path, resp.StatusCode)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}

func TestUnresponsivePeerTimesOut(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c // hold the connection open, answer nothing
		}
	}()
	defer func() {
		lis.Close()
		for c := range accepted {
			c.Close()
		}
	}()
	c := shuffleserver.NewClient(app, token, 200*time.Millisecond)
	defer c.Close()
	_, err = c.Fetch(context.Background(), shuffleserver.Address{HostPort: lis.Addr().String()}, 1, 0, 0, nil)
	if !errors.Is(err, shuffleserver.ErrTimeout) {
		t.Fatalf("peer that never answers: %v, want ErrTimeout", err)
	}
}

func TestUnservedStoreAddressIsAFileURL(t *testing.T) {
	a := shuffleserver.Address{Dir: "/tmp/flint shuffle/x"}
	got, err := shuffleserver.ParseAddress(a.String())
	if err != nil || got != a || !strings.HasPrefix(a.String(), "file:///tmp/") {
		t.Fatalf("%q parsed as %+v, %v", a.String(), got, err)
	}
}

func TestParseAddressRejectsBadAddresses(t *testing.T) {
	for _, s := range []string{"", "127.0.0.1:1", "ftp://h:1/", "https://h:1/", "http://h:1/?pin=ab", "http:///?dir=x", "file://host/x", "file:"} {
		if _, err := shuffleserver.ParseAddress(s); err == nil {
			t.Errorf("ParseAddress(%q) accepted", s)
		}
	}
}

func TestTokenDependsOnSecretAndApplication(t *testing.T) {
	a := shuffleserver.Token("s", "app")
	if a == shuffleserver.Token("s", "app2") || a == shuffleserver.Token("s2", "app") || a != shuffleserver.Token("s", "app") {
		t.Fatal("token is not a function of both secret and application")
	}
	if len(a) != 43 { // 32 bytes, unpadded base64
		t.Fatalf("token of %d characters", len(a))
	}
}

// FuzzHandler sends arbitrary paths and tokens to the handler: every
// answer is a status the protocol defines, never a panic, and nothing is
// served without the token.
func FuzzHandler(f *testing.F) {
	dir := f.TempDir()
	s, err := shuffle.OpenStore(dir + "/store")
	if err != nil {
		f.Fatal(err)
	}
	w, err := shuffle.NewWriter(shuffle.Config{Store: s, ShuffleID: 1, Partitions: 2, Order: shuffle.ByteOrder, Memory: shuffle.NewMemory(1 << 20).Task()})
	if err != nil {
		f.Fatal(err)
	}
	w.Add(1, []byte("k"), []byte("v"))
	if _, err := w.Commit(); err != nil {
		f.Fatal(err)
	}
	h := shuffleserver.Handler(s, app, token, quiet())
	f.Add("/shuffle/v1/app-1/1/0/1", true)
	f.Add("/shuffle/v1/app-1/1/0/9", true)
	f.Add("/shuffle/v1/app%2F1/1/0/1", true)
	f.Add("/shuffle/v1/app-1/1/0/1", false)
	f.Add("/shuffle/v1/../../etc/passwd", true)
	f.Fuzz(func(t *testing.T, path string, authed bool) {
		req, err := http.NewRequest(http.MethodGet, "http://x/", nil)
		if err != nil {
			return
		}
		req.URL.Path = path
		if authed {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
			if !authed {
				t.Fatalf("%q served without the token", path)
			}
		case http.StatusUnauthorized:
			if authed {
				t.Fatalf("%q refused the token", path)
			}
		case http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusInternalServerError:
		default:
			t.Fatalf("%q: status %d", path, rec.Code)
		}
	})
}

// FuzzParseAddress: an address that parses prints as one that parses to
// the same thing.
func FuzzParseAddress(f *testing.F) {
	f.Add("https://10.0.0.1:4000/?pin=" + strings.Repeat("ab", 32) + "&dir=%2Fsandbox%2Fx")
	f.Add("http://h:1/?dir=/x")
	f.Add("file:///tmp/a%20b")
	f.Fuzz(func(t *testing.T, s string) {
		a, err := shuffleserver.ParseAddress(s)
		if err != nil {
			return
		}
		b, err := shuffleserver.ParseAddress(a.String())
		if err != nil || b != a {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, a, a.String(), b, err)
		}
	})
}

func TestUnknownNamespaceIsNotFound(t *testing.T) {
	s := writeOutput(t)
	srv := start(t, s, false)
	c := shuffleserver.NewClient(app, token, time.Minute)
	defer c.Close()
	a := srv.Address()
	a.Namespace = "never-served"
	var se *shuffleserver.StatusError
	if _, err := c.Fetch(context.Background(), a, 1, 0, 0, nil); !errors.As(err, &se) || se.Code != http.StatusNotFound {
		t.Fatalf("unknown namespace: %v", err)
	}
	if _, err := srv.Serve("../x", s); err == nil {
		t.Fatal("a namespace with a slash served")
	}
	if _, err := shuffleserver.ParseAddress("http://h:1/?ns=a%2Fb"); err == nil {
		t.Fatal("an address with a bad namespace parsed")
	}
}
