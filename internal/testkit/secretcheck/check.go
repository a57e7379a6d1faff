package secretcheck

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/webui"
)

// Values are the test's secrets, known so that every output can be searched
// for them. UISecret is the application secret the UI token derives from.
const (
	DBPassword = "db-pw-9f3c1e77a2"  // flint.executorEnv.DB_PASSWORD
	APISecret  = "api-sec-5be8d40c1" // flint.mesos.executor.secret.values
	UISecret   = "ui-app-secret-0b6e2f94d8c1"
	SecretFile = "creds/api.txt"
)

// Conf is the configuration that gives executors the secrets.
func Conf() []string {
	return []string{
		"flint.executorEnv.DB_PASSWORD=" + DBPassword,
		"flint.mesos.executor.secret.values=" + APISecret,
		"flint.mesos.executor.secret.envkeys=API_SECRET",
		"flint.mesos.executor.secret.filenames=" + SecretFile,
		"flint.authenticate.secret=" + UISecret,
		"flint.log.level=debug", // executors log their settings (secrets redacted) into their sandboxes
	}
}

// Seen is what a task found in its executor.
type Seen struct{ DBPassword, APISecret, File, FileMode string }

// Read reads the secrets where the executor was given them.
var Read = framework.Register("secretcheck.read", func(ctx context.Context, _ int) (Seen, error) {
	p := filepath.Join(os.Getenv("MESOS_SANDBOX"), SecretFile)
	b, err := os.ReadFile(p)
	if err != nil {
		return Seen{}, fmt.Errorf("secret file: %w", err)
	}
	st, err := os.Stat(p)
	if err != nil {
		return Seen{}, err
	}
	return Seen{DBPassword: os.Getenv("DB_PASSWORD"), APISecret: os.Getenv("API_SECRET"), File: string(b), FileMode: st.Mode().Perm().String()}, nil
})

// Check runs tasks on fc (made with Conf) and checks that they see the
// secrets and that none of them is in the master's or agents' /state, the
// UI's environment (REST), the driver's log (logs) or any file the agents
// below workDir wrote but the secret file itself — the agents' checkpoints
// included, which hold the TaskInfo/ExecutorInfo as the driver sent it: a
// secret there only as a Mesos Secret's bytes (base64 in the JSON), never
// as a plain variable's value.
func Check(t testing.TB, fc *framework.Context, masterURL string, logs func() string, workDir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	got, err := framework.Map(ctx, fc, Read, []int{0, 1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range got {
		if s != (Seen{DBPassword: DBPassword, APISecret: APISecret, File: APISecret, FileMode: "-r--------"}) {
			t.Fatalf("task %d saw %+v", i, s)
		}
	}
	if fc.UIURL() != "" {
		if env := get(t, fc.UIURL()+"/api/v1/applications/"+fc.AppID()+"/environment", webui.TokenFor(UISecret)); !strings.Contains(env, "flint.executorEnv.DB_PASSWORD") {
			t.Fatalf("the UI's environment does not list flint.executorEnv.DB_PASSWORD: %s", env)
		}
	}
	NowhereElse(t, fc, masterURL, logs, workDir, []string{DBPassword, APISecret, UISecret}, SecretFile)
}

// NowhereElse checks that no value of secrets is in the master's or agents'
// /state, the UI's environment (REST; fc made with flint.authenticate.secret
// UISecret), the driver's log (logs) or any file the agents below workDir
// wrote but the secret files (sandbox-relative paths) themselves.
func NowhereElse(t testing.TB, fc *framework.Context, masterURL string, logs func() string, workDir string, secrets []string, secretFiles ...string) {
	t.Helper()
	where := map[string]string{}
	state := get(t, masterURL+"/state", "")
	where["master /state"] = state
	var ms struct {
		Slaves []struct{ PID string } `json:"slaves"`
	}
	if err := json.Unmarshal([]byte(state), &ms); err != nil || len(ms.Slaves) == 0 {
		t.Fatalf("master /state: %v (%d agents)", err, len(ms.Slaves))
	}
	for _, a := range ms.Slaves {
		_, hostPort, _ := strings.Cut(a.PID, "@")
		where["agent "+hostPort+" /state"] = get(t, "http://"+hostPort+"/state", "")
	}
	if fc.UIURL() != "" {
		env := get(t, fc.UIURL()+"/api/v1/applications/"+fc.AppID()+"/environment", webui.TokenFor(UISecret))
		if !strings.Contains(env, "flint.mesos.executor.secret.") {
			t.Fatalf("the UI's environment does not list the flint.mesos.executor.secret.* settings: %s", env)
		}
		where["UI environment"] = env
	}
	where["driver log"] = logs()
	for what, text := range where {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s shows a secret value (%s…)", what, s[:6])
			}
		}
	}
	err := filepath.WalkDir(workDir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		case d.IsDir() || d.Type()&fs.ModeType != 0 || isSecretFile(p, secretFiles):
			return nil
		}
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if isExecutorCopy(t, b) {
			return nil // the fetched executor binary holds the test's constants
		}
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s holds a secret value (%s…)", p, s[:6])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testBinary is the running test binary: coarse and fine executors are
// copies of it, fetched into sandboxes (and the fetcher's cache).
var testBinary = sync.OnceValues(func() ([]byte, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return os.ReadFile(exe)
})

// isExecutorCopy reports whether b is the test binary or the start of it: a
// fetched executor, or one still being fetched (the fetcher's temporary
// file, not yet executable, when a late executor launches during the check).
func isExecutorCopy(t testing.TB, b []byte) bool {
	exe, err := testBinary()
	if err != nil {
		t.Fatalf("reading the test binary: %v", err)
	}
	return len(b) > 0 && bytes.HasPrefix(exe, b)
}

func isSecretFile(p string, files []string) bool {
	for _, f := range files {
		if strings.HasSuffix(filepath.ToSlash(p), "/"+f) {
			return true
		}
	}
	return false
}

func get(t testing.TB, url, bearer string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return string(b)
}
