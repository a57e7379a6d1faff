package mesosconn

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/config"
)

func flintConfig(t *testing.T, kv ...string) *config.Config {
	t.Helper()
	c := config.New()
	for i := 0; i < len(kv); i += 2 {
		if err := c.Set(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestConfigFrom(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("pa55\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fc := flintConfig(t,
		"flint.master", "mesos://zk://z1:2181/mesos",
		"flint.app.name", "pi",
		"flint.mesos.role", "batch, analytics",
		"flint.mesos.principal", "flint",
		"flint.mesos.secret.file", secret,
		"flint.mesos.checkpoint", "true",
		"flint.mesos.failoverTimeout", "300",
		"flint.mesos.rejectOfferDurationForUnmetConstraints", "600s",
		"flint.mesos.gpus.max", "2",
		"flint.mesos.user", "batchuser",
	)
	c, err := ConfigFrom(fc, WithFramework("http://d:4040", "d", map[string]string{"k": "v"}), WithFrameworkID("fw-1"), WithCodec(JSON))
	if err != nil {
		t.Fatal(err)
	}
	want := map[DeclineReason]time.Duration{DeclineNoDemand: 120 * time.Second, DeclineUnmetConstraint: 600 * time.Second, DeclineReachedMaxCores: 120 * time.Second}
	if c.Master != "mesos://zk://z1:2181/mesos" || c.Name != "pi" || !reflect.DeepEqual(c.Roles, []string{"batch", "analytics"}) ||
		c.Principal != "flint" || c.Secret != "pa55" || !c.Checkpoint || c.FailoverTimeout != 300*time.Second ||
		!reflect.DeepEqual(c.RefuseSeconds, want) || c.WebUIURL != "http://d:4040" || c.Hostname != "d" || c.Labels["k"] != "v" ||
		c.FrameworkID != "fw-1" || c.Codec != JSON || c.User != "batchuser" || c.frameworkInfo("").User != "batchuser" ||
		!reflect.DeepEqual(c.Capabilities, []mesos.FrameworkInfo_Capability_Type{mesos.FrameworkInfo_Capability_GPU_RESOURCES}) {
		t.Errorf("ConfigFrom = %+v", c)
	}
	d := Config{}.withDefaults()
	if d.Name != "flint" || d.User == "" || !reflect.DeepEqual(d.Roles, []string{"*"}) || d.MissedHeartbeats != 5 || d.CallTimeout != 15*time.Second {
		t.Errorf("defaults %+v", d)
	}
	if fi := d.frameworkInfo(""); fi.GetFailoverTimeout() != 0 || fi.GetCheckpoint() || len(fi.Capabilities) != 1 || fi.Principal != nil || fi.Labels != nil {
		t.Errorf("default FrameworkInfo %+v", fi)
	}
}

func TestConfigFromErrors(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		kv   []string
		want string
	}{
		{[]string{"flint.mesos.secret", "x"}, "needs flint.mesos.principal"},
		{[]string{"flint.mesos.principal", "p", "flint.mesos.secret", "x", "flint.mesos.secret.file", secret}, "not both"},
		{[]string{"flint.mesos.principal", "p", "flint.mesos.secret.file", "/nonexistent/secret"}, "flint.mesos.secret.file"},
	} {
		_, err := ConfigFrom(flintConfig(t, tt.kv...))
		if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "mesosconn: ") {
			t.Errorf("ConfigFrom(%v) = %v, want an error containing %q", tt.kv, err, tt.want)
		}
	}
}

// flint.mesos.codec selects the media type; protobuf is the default and
// anything else is refused when the configuration loads.
func TestConfigFromCodec(t *testing.T) {
	for value, want := range map[string]Codec{"": Protobuf, "protobuf": Protobuf, "json": JSON} {
		var kv []string
		if value != "" {
			kv = []string{"flint.mesos.codec", value}
		}
		c, err := ConfigFrom(flintConfig(t, kv...))
		if err != nil || c.Codec != want {
			t.Errorf("flint.mesos.codec=%q: %v, %v; want %v", value, c.Codec, err, want)
		}
	}
	if _, err := config.Load(config.LoadOptions{Conf: []string{"flint.mesos.codec=xml"}}); err == nil || !strings.Contains(err.Error(), "flint.mesos.codec") {
		t.Errorf("flint.mesos.codec=xml: %v, want an error naming the key", err)
	}
}
