package executor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/task"
)

func TestVerifyBinary(t *testing.T) {
	p := filepath.Join(t.TempDir(), "flint")
	if err := os.WriteFile(p, []byte("the executor binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("the executor binary"))
	good := hex.EncodeToString(sum[:])
	if err := VerifyBinary(p, "flint", good); err != nil {
		t.Fatalf("matching binary refused: %v", err)
	}
	if err := VerifyBinary(p, "flint", strings.ToUpper(good)); err != nil {
		t.Fatalf("upper-case hex refused: %v", err)
	}
	bad := strings.Repeat("0", 64)
	err := VerifyBinary(p, "flint", bad)
	if !errors.Is(err, ErrBinaryMismatch) {
		t.Fatalf("mismatch: %v, want ErrBinaryMismatch", err)
	}
	for _, want := range []string{"flint has SHA-256 " + good, "the driver expects " + bad, "not registering", "exit status 65"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("mismatch error %q lacks %q", err, want)
		}
	}
	if err := VerifyBinary(p, "flint", "abc"); !errors.Is(err, ErrBinaryMismatch) || !strings.Contains(err.Error(), "64 hex digits") {
		t.Errorf("malformed expectation: %v", err)
	}
	if err := VerifyBinary(filepath.Join(t.TempDir(), "none"), "none", good); err == nil || errors.Is(err, ErrBinaryMismatch) {
		t.Errorf("unreadable binary: %v, want a read error", err)
	}
}

func TestVerifySelf(t *testing.T) {
	t.Setenv(contract.EnvBinarySHA256, "")
	if err := VerifySelf(); err != nil {
		t.Fatalf("unset: %v", err)
	}
	self, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Fatalf("read /proc/self/exe (executors check their binary through it, so the test needs it): %v", err)
	}
	sum := sha256.Sum256(self)
	t.Setenv(contract.EnvBinarySHA256, hex.EncodeToString(sum[:]))
	if err := VerifySelf(); err != nil {
		t.Fatalf("own hash: %v", err)
	}
	t.Setenv(contract.EnvBinarySHA256, strings.Repeat("f", 64))
	if err := VerifySelf(); !errors.Is(err, ErrBinaryMismatch) {
		t.Fatalf("wrong hash: %v", err)
	}
}

func TestVerifyRegistry(t *testing.T) {
	r := task.NewRegistry()
	t.Setenv(contract.EnvRegistrySHA256, "")
	if err := VerifyRegistry(r); err != nil {
		t.Fatalf("unset: %v", err)
	}
	t.Setenv(contract.EnvRegistrySHA256, r.Fingerprint())
	if err := VerifyRegistry(r); err != nil {
		t.Fatalf("own fingerprint: %v", err)
	}
	task.MustRegister(r, "extra", func(context.Context, int) (int, error) { return 0, nil }, nil)
	err := VerifyRegistry(r)
	if !errors.Is(err, ErrRegistryMismatch) || !strings.Contains(err.Error(), "register every function and dataset job unconditionally") {
		t.Fatalf("other registry: %v", err)
	}
}
