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

func valueSecret(data string) *mesos.Secret {
	return &mesos.Secret{Type: mesos.Secret_VALUE, Value: &mesos.Secret_Value{Data: []byte(data)}}
}

// Value secrets reach the process as environment variables and as files in
// the sandbox (owner-only), as a Mesos agent's default resolver and secret
// volumes give them; a plain variable of the same name is replaced.
func TestValueSecretsReachTheProcess(t *testing.T) {
	dir := t.TempDir()
	secretType := mesos.Environment_Variable_SECRET
	plain := "plain-value"
	cmd := sh(`printf '%s|' "$DB_PASSWORD" "$OTHER"; cat creds/token.txt; stat -c %a creds/token.txt`)
	cmd.Environment = &mesos.Environment{Variables: []mesos.Environment_Variable{
		{Name: "DB_PASSWORD", Type: &secretType, Secret: valueSecret("hunter2-env")},
		{Name: "OTHER", Value: &plain},
	}}
	src := mesos.Volume_Source_SECRET
	container := &mesos.ContainerInfo{Type: mesos.ContainerInfo_MESOS.Enum(), Volumes: []mesos.Volume{{
		ContainerPath: "creds/token.txt", Mode: mesos.RO.Enum(),
		Source: &mesos.Volume_Source{Type: src, Secret: valueSecret("hunter2-file")},
	}}}
	env := BuildEnv(os.Environ(), nil, cmd.Environment)
	for _, kv := range env {
		if strings.Contains(kv, "hunter2") {
			t.Fatalf("BuildEnv put a secret into the plain environment: %s", kv)
		}
	}
	p, err := Launch(Spec{Command: cmd, Sandbox: dir, Env: append(env, "DB_PASSWORD=plain-overridden"), Container: container})
	if err != nil {
		t.Fatal(err)
	}
	if st := wait(t, p, 10*time.Second); !st.Success() {
		t.Fatalf("status %v", st)
	}
	out, _ := os.ReadFile(filepath.Join(dir, "stdout"))
	if string(out) != "hunter2-env|plain-value|hunter2-file400\n" {
		t.Fatalf("stdout %q", out)
	}
}

// A reference secret fails the launch, naming the reference and never a
// value; a secret volume may not leave the sandbox.
func TestSecretsTheAgentCannotResolve(t *testing.T) {
	secretType := mesos.Environment_Variable_SECRET
	ref := &mesos.Secret{Type: mesos.Secret_REFERENCE, Reference: &mesos.Secret_Reference{Name: "/db/password"}}
	cmd := sh("true")
	cmd.Environment = &mesos.Environment{Variables: []mesos.Environment_Variable{{Name: "DB", Type: &secretType, Secret: ref}}}
	_, err := Launch(Spec{Command: cmd, Sandbox: t.TempDir(), Env: os.Environ()})
	if !errors.Is(err, ErrLaunch) || !strings.Contains(err.Error(), `reference "/db/password"`) || !strings.Contains(err.Error(), "secret resolver") {
		t.Fatalf("reference secret: %v", err)
	}
	src := mesos.Volume_Source_SECRET
	for _, p := range []string{"/etc/token", "../token", "."} {
		c := &mesos.ContainerInfo{Volumes: []mesos.Volume{{ContainerPath: p, Source: &mesos.Volume_Source{Type: src, Secret: valueSecret("s3cr3t-value")}}}}
		_, err := Launch(Spec{Command: sh("true"), Sandbox: t.TempDir(), Env: os.Environ(), Container: c})
		if err == nil || !strings.Contains(err.Error(), "inside it") || strings.Contains(err.Error(), "s3cr3t-value") {
			t.Fatalf("secret volume at %q: %v", p, err)
		}
	}
}
