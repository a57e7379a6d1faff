package s3_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/config/jobconf"
	"github.com/flint-mesos/flint/mesosbackend"
)

// The static credentials reach Mesos executors only as Mesos secrets: the job's settings sent
// to executors hold none of the credential keys (nor the .file paths, which name a driver's
// file), and the executor's environment has AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN as variables of type SECRET (the driver read the .file), never plain.
func TestCredentialsReachExecutorsAsMesosSecretsOnly(t *testing.T) {
	const ak, sk, tok = "AKIDflintS3test7c41", "s3-secret-key-5e9a2f7b13d8", "s3-session-token-3c9e0d7a41"
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte(sk+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := config.New()
	for k, v := range map[string]string{"flint.s3.endpoint": "http://127.0.0.1:1", "flint.s3.accessKey": ak,
		"flint.s3.secretKey.file": file, "flint.s3.sessionToken": tok, "flint.executorEnv.PLAIN": "p"} {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	props := jobconf.FromConfig(cfg)
	for k, v := range props.Settings {
		if strings.HasPrefix(k, "flint.s3.accessKey") || strings.HasPrefix(k, "flint.s3.secretKey") || strings.HasPrefix(k, "flint.s3.sessionToken") {
			t.Errorf("job settings carry %s=%s", k, v)
		}
	}
	for k := range props.Secrets {
		if strings.HasPrefix(k, "flint.s3.") {
			t.Errorf("job secrets carry %s", k)
		}
	}
	if props.Settings["flint.s3.endpoint"] != "http://127.0.0.1:1" {
		t.Errorf("job settings lack the endpoint: %v", props.Settings)
	}
	ex, errs := mesosbackend.ReadExecutor(cfg)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := map[string]string{"AWS_ACCESS_KEY_ID": ak, "AWS_SECRET_ACCESS_KEY": sk, "AWS_SESSION_TOKEN": tok}
	got := map[string]string{}
	for _, v := range ex.Environment(map[string]string{"PLAIN": "p"}) {
		switch {
		case v.Type != nil && *v.Type == mesos.Environment_Variable_SECRET:
			if v.Secret.Type != mesos.Secret_VALUE {
				t.Errorf("%s: secret of type %v", v.Name, v.Secret.Type)
			}
			got[v.Name] = string(v.Secret.Value.Data)
		case v.Value != nil:
			for _, s := range []string{ak, sk, tok} {
				if strings.Contains(*v.Value, s) {
					t.Errorf("plain variable %s holds a credential", v.Name)
				}
			}
		}
	}
	if len(got) != len(want) {
		t.Fatalf("secret variables %v, want %v", keys(got), keys(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("secret variable %s has another value", k)
		}
	}
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
