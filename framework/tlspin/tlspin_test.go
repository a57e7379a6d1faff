package tlspin

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// serve accepts one TLS connection with cfg and echoes a line.
func serve(t *testing.T, cfg *tls.Config) string {
	t.Helper()
	lis, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { lis.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			_, _ = io.Copy(c, c)
			c.Close()
		}
	}()
	return lis.Addr().String()
}

func TestClientAcceptsOnlyThePinnedCertificate(t *testing.T) {
	srv, pin, err := Server("127.0.0.1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	addr := serve(t, srv)
	good, err := Client(pin)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.Dial("tcp", addr, good)
	if err != nil {
		t.Fatalf("pinned client: %v", err)
	}
	if _, err := c.Write([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "hi" {
		t.Fatalf("echo %q, %v", buf, err)
	}
	c.Close()

	_, otherPin, err := Server("127.0.0.1", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if otherPin == pin {
		t.Fatal("two certificates share a fingerprint")
	}
	bad, err := Client(otherPin)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tls.Dial("tcp", addr, bad); !errors.Is(err, ErrPinMismatch) {
		t.Fatalf("client pinning another certificate: %v, want ErrPinMismatch", err)
	}
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	_, _ = raw.Write([]byte("plaintext\r\n\r\n"))
	_ = raw.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, _ := io.ReadAll(raw); strings.Contains(string(b), "plaintext") {
		t.Fatal("the TLS server echoed plaintext")
	}
}

func TestClientRejectsMalformedPins(t *testing.T) {
	for _, pin := range []string{"", "zz", "abcd", strings.Repeat("a", 63)} {
		if _, err := Client(pin); err == nil {
			t.Errorf("Client(%q) accepted", pin)
		}
	}
}

func TestServerCertificateNamesTheHost(t *testing.T) {
	for host, check := range map[string]func(*tls.Config) bool{
		"10.1.2.3":       func(c *tls.Config) bool { return cert(t, c).IPAddresses[0].String() == "10.1.2.3" },
		"driver.example": func(c *tls.Config) bool { return cert(t, c).DNSNames[0] == "driver.example" },
		"":               func(c *tls.Config) bool { return len(cert(t, c).DNSNames) == 0 },
	} {
		cfg, _, err := Server(host, time.Hour)
		if err != nil || !check(cfg) {
			t.Errorf("Server(%q): %v", host, err)
		}
	}
}

func cert(t *testing.T, c *tls.Config) *x509.Certificate {
	t.Helper()
	x, err := x509.ParseCertificate(c.Certificates[0].Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
