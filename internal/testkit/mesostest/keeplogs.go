package mesostest

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/internal/redact"
)

// EnvLogDir names a directory where every test using this package keeps its
// logs — the driver's and the cluster's (LogBuffer) and every sandbox's
// stdout and stderr — whether it passed or failed, so that `make test`
// can search all of them for the test suite's secrets
// (scripts/check-test-secrets). Unset: nothing is kept.
const EnvLogDir = "FLINT_TEST_LOG_DIR"

// keepDir is the test's own directory below $FLINT_TEST_LOG_DIR, or "".
func keepDir(t testing.TB) string {
	root := os.Getenv(EnvLogDir)
	if root == "" {
		return ""
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Errorf("%s: %v", EnvLogDir, err)
		return ""
	}
	d, err := os.MkdirTemp(root, name+"-")
	if err != nil {
		t.Errorf("%s: %v", EnvLogDir, err)
		return ""
	}
	return d
}

// keepLog writes one log of t into its keep directory.
func keepLog(t testing.TB, what, text string) {
	if d := keepDir(t); d != "" {
		if err := os.WriteFile(filepath.Join(d, what+".log"), []byte(text), 0o644); err != nil {
			t.Errorf("keep %s log: %v", what, err)
		}
	}
}

// keepSandboxLogs copies the stdout and stderr of every sandbox below
// workDir into t's keep directory.
func keepSandboxLogs(t testing.TB, workDir string) {
	d := keepDir(t)
	if d == "" {
		return
	}
	err := filepath.WalkDir(workDir, func(p string, e fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case e.IsDir() || (e.Name() != "stdout" && e.Name() != "stderr") || !e.Type().IsRegular():
			return nil
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(workDir, p)
		return os.WriteFile(filepath.Join(d, strings.ReplaceAll(rel, string(filepath.Separator), "_")), []byte(redact.Text(string(b))), 0o644)
	})
	if err != nil {
		t.Errorf("keep sandbox logs: %v", err)
	}
}
