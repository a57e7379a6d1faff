package secretcheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
)

// The reference scenario's secret: in the agents' secret store under
// RefName, given to executors by name (flint.mesos.executor.secret.names).
const (
	RefName  = "/flint/api-token"
	RefValue = "ref-sec-4a7d90c2e1"
	RefFile  = "creds/ref.txt"
)

// WriteStore writes the secret store the agents' file-backed resolver
// reads (containerizer.DirSecretResolver) into dir.
func WriteStore(t testing.TB, dir string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(RefName))
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(RefValue), 0o600); err != nil {
		t.Fatal(err)
	}
}

// RefConf is the configuration that gives executors the reference secret,
// as a variable and as a sandbox file.
func RefConf() []string {
	return []string{
		"flint.mesos.executor.secret.names=" + RefName,
		"flint.mesos.executor.secret.envkeys=REF_TOKEN",
		"flint.mesos.executor.secret.filenames=" + RefFile,
		"flint.authenticate.secret=" + UISecret,
		"flint.log.level=debug",
	}
}

// RefSeen is what a task found of the reference secret.
type RefSeen struct{ Env, File, FileMode string }

// ReadRef reads the reference secret where the executor was given it.
var ReadRef = framework.Register("secretcheck.readRef", func(ctx context.Context, _ int) (RefSeen, error) {
	p := filepath.Join(os.Getenv("MESOS_SANDBOX"), RefFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return RefSeen{}, fmt.Errorf("secret file: %w", err)
	}
	st, err := os.Stat(p)
	if err != nil {
		return RefSeen{}, err
	}
	return RefSeen{Env: os.Getenv("REF_TOKEN"), File: string(b), FileMode: st.Mode().Perm().String()}, nil
})

// CheckReferences runs tasks on fc (made with RefConf, on agents resolving
// secrets from a store WriteStore wrote) and checks that they see the
// store's value and that it is nowhere else (NowhereElse): the driver
// sends only the name, so not even the agents' checkpoints hold it.
func CheckReferences(t testing.TB, fc *framework.Context, masterURL string, logs func() string, workDir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got, err := framework.Map(ctx, fc, ReadRef, []int{0, 1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range got {
		if s != (RefSeen{Env: RefValue, File: RefValue, FileMode: "-r--------"}) {
			t.Fatalf("task %d saw %+v", i, s)
		}
	}
	NowhereElse(t, fc, masterURL, logs, workDir, []string{RefValue, UISecret}, RefFile)
}
