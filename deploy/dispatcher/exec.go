package dispatcher

import (
	"crypto/sha256"
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// FlintModule is the module path every Flint program links.
const FlintModule = "github.com/flint-mesos/flint"

// IsFlintProgram reports whether the executable at path is a Go program built
// with Flint (its build information names FlintModule as its main module or a
// dependency), and if not, why.
func IsFlintProgram(path string) (bool, string) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return false, fmt.Sprintf("%s is not a Go executable: %v", filepath.Base(path), err)
	}
	if bi.Main.Path == FlintModule {
		return true, ""
	}
	for _, dep := range bi.Deps {
		if dep.Path == FlintModule {
			return true, ""
		}
	}
	return false, fmt.Sprintf("%s (Go module %s) does not use %s", filepath.Base(path), bi.Main.Path, FlintModule)
}

// ExecDriver is `flint dispatcher exec-driver [--sha256 HEX] -- PROGRAM ARGS…`,
// the first process of a driver task: it checks the fetched program (its hash
// when the submission gave one, that it is a Flint program) and replaces itself
// with it. A failed check exits with ExitChecksum or ExitNotFlint after one line
// on stderr, so that the task's status names the reason.
func ExecDriver(args []string, stderr io.Writer) int {
	var want string
	for len(args) > 0 && args[0] != "--" {
		if args[0] == "--sha256" && len(args) > 1 {
			want, args = args[1], args[2:]
			continue
		}
		fmt.Fprintf(stderr, "flint dispatcher exec-driver: unexpected argument %q\n", args[0])
		return ExitNoExec
	}
	if len(args) < 2 {
		fmt.Fprintln(stderr, "flint dispatcher exec-driver: no program after --")
		return ExitNoExec
	}
	prog, argv := args[1], args[1:]
	if want != "" {
		got, err := fileSHA256(prog)
		if err != nil {
			fmt.Fprintf(stderr, "flint dispatcher exec-driver: %v\n", err)
			return ExitNoExec
		}
		if got != want {
			fmt.Fprintf(stderr, "flint dispatcher exec-driver: %s has SHA-256 %s, not the submitted %s\n", prog, got, want)
			return ExitChecksum
		}
	}
	if ok, why := IsFlintProgram(prog); !ok {
		fmt.Fprintf(stderr, "flint dispatcher exec-driver: not a Flint program: %s\n", why)
		return ExitNotFlint
	}
	abs, err := filepath.Abs(prog)
	if err == nil {
		err = syscall.Exec(abs, argv, os.Environ())
	}
	fmt.Fprintf(stderr, "flint dispatcher exec-driver: starting %s: %v\n", prog, err)
	return ExitNoExec
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hexOf(h.Sum(nil)), nil
}
