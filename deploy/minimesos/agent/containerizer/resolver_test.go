package containerizer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

func refSecret(name string, key ...string) *mesos.Secret {
	s := &mesos.Secret{Type: mesos.Secret_REFERENCE, Reference: &mesos.Secret_Reference{Name: name}}
	if len(key) > 0 {
		s.Reference.Key = &key[0]
	}
	return s
}

// secretStore is a DirSecretResolver's directory: /app/token (a whole
// file), /db (a JSON object of keys), and a symlink pointing out of it.
func secretStore(t *testing.T) DirSecretResolver {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "app"), 0o700); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside")
	for p, data := range map[string]string{"app/token": "tok-from-store-81c2", "db": `{"password":"pw-from-store-5e0a","port":5432}`} {
		if err := os.WriteFile(filepath.Join(dir, p), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(outside, []byte("outside-value-77"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	return DirSecretResolver{Dir: dir}
}

// With a file-backed store in the role of Mesos' --secret_resolver module,
// reference secrets reach the process — by name as a variable, by name and
// key as a sandbox file — and value secrets still resolve.
func TestReferenceSecretsFromTheStore(t *testing.T) {
	store := secretStore(t)
	dir := t.TempDir()
	secretType := mesos.Environment_Variable_SECRET
	cmd := sh(`printf '%s|%s|' "$TOKEN" "$PLAIN_SECRET"; cat creds/db.txt`)
	cmd.Environment = &mesos.Environment{Variables: []mesos.Environment_Variable{
		{Name: "TOKEN", Type: &secretType, Secret: refSecret("/app/token")},
		{Name: "PLAIN_SECRET", Type: &secretType, Secret: valueSecret("by-value-3")},
	}}
	container := &mesos.ContainerInfo{Type: mesos.ContainerInfo_MESOS.Enum(), Volumes: []mesos.Volume{{
		ContainerPath: "creds/db.txt", Mode: mesos.RO.Enum(),
		Source: &mesos.Volume_Source{Type: mesos.Volume_Source_SECRET, Secret: refSecret("/db", "password")},
	}}}
	p, err := Launch(Spec{Command: cmd, Sandbox: dir, Env: BuildEnv(os.Environ(), nil, cmd.Environment), Container: container, Secrets: store})
	if err != nil {
		t.Fatal(err)
	}
	if st := wait(t, p, 10*time.Second); !st.Success() {
		t.Fatalf("status %v", st)
	}
	if out, _ := os.ReadFile(filepath.Join(dir, "stdout")); string(out) != "tok-from-store-81c2|by-value-3|pw-from-store-5e0a" {
		t.Fatalf("stdout %q", out)
	}
}

// What the store cannot resolve fails with a message naming the reference
// (and key), never a value: a name it does not hold, a name leaving it
// (.. or a symlink out), a key of a secret that is no JSON object or lacks
// the key, a reference that also carries a value.
func TestReferenceSecretsTheStoreCannotResolve(t *testing.T) {
	store := secretStore(t)
	both := refSecret("/app/token")
	both.Value = &mesos.Secret_Value{Data: []byte("x")}
	for _, c := range []struct {
		sec  *mesos.Secret
		want string
		is   error
	}{
		{refSecret("/missing"), `"/missing"`, ErrNoSuchSecret},
		{refSecret("/app"), `"/app" (not a file)`, ErrNoSuchSecret},
		{refSecret("/../outside"), "not a name inside the secret store", nil},
		{refSecret("/escape"), `secret reference "/escape"`, nil},
		{refSecret("/app/token", "user"), `key "user" given, but the secret is not a JSON object`, nil},
		{refSecret("/db", "user"), `secret "/db" has no string key "user"`, ErrNoSuchSecret},
		{refSecret("/db", "port"), `no string key "port"`, ErrNoSuchSecret},
		{both, "no value", nil},
	} {
		data, err := store.Resolve(c.sec)
		if err == nil || !strings.Contains(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("Resolve(%v): %q, %v; want an error containing %q", c.sec, data, err, c.want)
			continue
		}
		for _, v := range []string{"tok-from-store", "pw-from-store", "outside-value"} {
			if strings.Contains(err.Error(), v) {
				t.Errorf("Resolve(%v)'s error shows a value: %v", c.sec, err)
			}
		}
	}
	// Through a launch: it fails before the process starts.
	secretType := mesos.Environment_Variable_SECRET
	cmd := sh("true")
	cmd.Environment = &mesos.Environment{Variables: []mesos.Environment_Variable{{Name: "X", Type: &secretType, Secret: refSecret("/missing")}}}
	if _, err := Launch(Spec{Command: cmd, Sandbox: t.TempDir(), Env: os.Environ(), Secrets: store}); !errors.Is(err, ErrLaunch) || !strings.Contains(err.Error(), `X: no such secret in the agent's secret store: "/missing"`) {
		t.Fatalf("launch with an unknown reference: %v", err)
	}
}
