package dispatcher

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// sealedPrefix marks a sealed secret value in a stored record.
const sealedPrefix = "sealed:v1:"

// Sealer encrypts submitted secrets (AES-256-GCM) so that no stored record holds
// one in clear; the dispatcher opens them only to put them into a driver task as
// Mesos secrets. Its key lives apart from the records (a file only the
// dispatcher's user can read).
type Sealer struct{ aead cipher.AEAD }

// NewSealer uses a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("dispatcher: secrets key: %d bytes, want 32", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("dispatcher: secrets key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("dispatcher: secrets key: %w", err)
	}
	return &Sealer{aead: aead}, nil
}

// LoadOrCreateKey reads the 32-byte key at path (base64), creating it (mode 0600)
// when missing.
func LoadOrCreateKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		key, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
		if err != nil || len(key) != 32 {
			return nil, fmt.Errorf("dispatcher: secrets key %s: want 32 bytes in base64", path)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("dispatcher: secrets key: %w", err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("dispatcher: secrets key: %w", err)
	}
	if err := writeAtomic(path, []byte(base64.StdEncoding.EncodeToString(key)+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("dispatcher: secrets key: %w", err)
	}
	return key, nil
}

// Seal encrypts a secret value.
func (s *Sealer) Seal(v string) (string, error) {
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	ct := s.aead.Seal(nonce, nonce, []byte(v), nil)
	return sealedPrefix + base64.StdEncoding.EncodeToString(ct), nil
}

// Open decrypts a sealed value.
func (s *Sealer) Open(sealed string) (string, error) {
	b64, ok := strings.CutPrefix(sealed, sealedPrefix)
	if !ok {
		return "", errors.New("dispatcher: not a sealed secret")
	}
	ct, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(ct) < s.aead.NonceSize() {
		return "", errors.New("dispatcher: corrupt sealed secret")
	}
	pt, err := s.aead.Open(nil, ct[:s.aead.NonceSize()], ct[s.aead.NonceSize():], nil)
	if err != nil {
		return "", errors.New("dispatcher: sealed secret does not open with this key")
	}
	return string(pt), nil
}
