package executor

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/task"
)

// ErrBinaryMismatch: the executor's binary does not have the SHA-256 the
// driver expects, so it does not register (the fetch was corrupted or
// tampered with, or flint.executor.uri names another build).
var ErrBinaryMismatch = errors.New("executor: binary SHA-256 mismatch")

// ErrRegistryMismatch: the executor's registered functions and jobs are
// not the driver's, so it does not register. It exits with
// contract.ExitBinaryMismatch too.
var ErrRegistryMismatch = errors.New("executor: function registry mismatch")

// VerifySelf checks, before an executor registers, the running binary
// against contract.EnvBinarySHA256 and the default function registry against
// contract.EnvRegistrySHA256; an unset variable is not checked. On Linux it reads
// /proc/self/exe, the image actually running.
func VerifySelf() error {
	if err := VerifyRegistry(task.Default()); err != nil {
		return err
	}
	want := strings.TrimSpace(os.Getenv(contract.EnvBinarySHA256))
	if want == "" {
		return nil
	}
	path, err := os.Executable()
	if err != nil {
		return fmt.Errorf("executor: find own binary to check %s: %w", contract.EnvBinarySHA256, err)
	}
	open := path
	if runtime.GOOS == "linux" {
		if _, err := os.Stat("/proc/self/exe"); err == nil {
			open = "/proc/self/exe"
		}
	}
	return VerifyBinary(open, path, want)
}

// VerifyRegistry compares r's fingerprint with contract.EnvRegistrySHA256.
func VerifyRegistry(r *task.Registry) error {
	want := strings.TrimSpace(os.Getenv(contract.EnvRegistrySHA256))
	if want == "" {
		return nil
	}
	if got := r.Fingerprint(); got != strings.ToLower(want) {
		names := r.Names()
		return fmt.Errorf("%w: this executor registers %d functions and jobs with fingerprint %s, the driver's have %s (%s): "+
			"register every function and dataset job unconditionally from init or package-level vars, and run the driver's binary; not registering, exit status %d",
			ErrRegistryMismatch, len(names), got, strings.ToLower(want), contract.EnvRegistrySHA256, contract.ExitBinaryMismatch)
	}
	return nil
}

// VerifyBinary checks that the file at open (shown as name) has the hex
// SHA-256 want; a mismatch wraps ErrBinaryMismatch and says what to do.
func VerifyBinary(open, name, want string) error {
	wantSum, err := hex.DecodeString(want)
	if err != nil || len(wantSum) != sha256.Size {
		return fmt.Errorf("%w: %s=%q is not a hex SHA-256 (64 hex digits)", ErrBinaryMismatch, contract.EnvBinarySHA256, want)
	}
	f, err := os.Open(open)
	if err != nil {
		return fmt.Errorf("executor: read own binary %s to check its SHA-256: %w", name, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("executor: read own binary %s to check its SHA-256: %w", name, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != strings.ToLower(want) {
		return fmt.Errorf("%w: %s has SHA-256 %s, the driver expects %s (%s): the fetched file is not the driver's executor binary "+
			"(a corrupted or tampered download, or flint.executor.uri/flint.executor.sha256 naming another build); not registering, exit status %d",
			ErrBinaryMismatch, name, got, strings.ToLower(want), contract.EnvBinarySHA256, contract.ExitBinaryMismatch)
	}
	return nil
}
