package tlspin

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// ErrPinMismatch is wrapped when the server's certificate is not the pinned
// one.
var ErrPinMismatch = errors.New("tlspin: the driver's certificate does not match the pinned SHA-256")

// Server makes a self-signed ECDSA P-256 certificate for host (a name or an
// IP), valid for validity, and returns the server TLS configuration with the
// hex SHA-256 of the certificate, which clients pin.
func Server(host string, validity time.Duration) (*tls.Config, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", fmt.Errorf("tlspin: key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, "", fmt.Errorf("tlspin: serial: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "flint driver"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(validity),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else if host != "" {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, "", fmt.Errorf("tlspin: certificate: %w", err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS13, Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	return cfg, Fingerprint(der), nil
}

// Fingerprint is the hex SHA-256 of a DER certificate.
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// Client is the client TLS configuration that accepts only the certificate
// whose hex SHA-256 is pin. Host names and chains are not checked: the pin
// is stronger than either for a certificate made for one application.
func Client(pin string) (*tls.Config, error) {
	want, err := hex.DecodeString(pin)
	if err != nil || len(want) != sha256.Size {
		return nil, fmt.Errorf("tlspin: pin %q is not a hex SHA-256", pin)
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		// Verification is the pin below, not the system's roots.
		InsecureSkipVerify: true, //nolint:gosec // replaced by VerifyConnection
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return fmt.Errorf("%w: no certificate presented", ErrPinMismatch)
			}
			got := sha256.Sum256(cs.PeerCertificates[0].Raw)
			if !bytes.Equal(got[:], want) {
				return fmt.Errorf("%w: got %x", ErrPinMismatch, got)
			}
			return nil
		},
	}, nil
}
