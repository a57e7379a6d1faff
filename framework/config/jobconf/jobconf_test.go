package jobconf

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"

	"github.com/flint-mesos/flint/framework/config"
)

func driverConfig(t *testing.T) *config.Config {
	t.Helper()
	c, err := config.Load(config.LoadOptions{Conf: []string{
		"flint.app.name=jobconf-test",
		"flint.locality.wait=7s",
		"flint.executorEnv.GREETING=hello",
		"flint.authenticate.secret=driver-only-secret-0123456789",
		"flint.mesos.secret=mesos-secret-value",
	}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Every effective setting travels, typed again on the executor; the
// driver's credentials never do.
func TestRoundTrip(t *testing.T) {
	p := FromConfig(driverConfig(t))
	for _, k := range []string{"flint.authenticate.secret", "flint.mesos.secret"} {
		if _, ok := p.Settings[k]; ok {
			t.Errorf("%s travels among the settings", k)
		}
		if _, ok := p.Secrets[k]; ok {
			t.Errorf("%s travels among the secrets", k)
		}
	}
	c, err := p.Config()
	if err != nil {
		t.Fatal(err)
	}
	if got := c.String("flint.app.name"); got != "jobconf-test" {
		t.Errorf("flint.app.name = %q", got)
	}
	if got := c.Duration("flint.locality.wait"); got != 7*time.Second {
		t.Errorf("flint.locality.wait = %s, want 7s", got)
	}
	if got := c.Prefixed("flint.executorEnv.")["GREETING"]; got != "hello" {
		t.Errorf("flint.executorEnv.GREETING = %q", got)
	}
	if got := c.Size("flint.executor.memory"); got != 1<<30 {
		t.Errorf("default flint.executor.memory = %d, want 1 GiB", got)
	}
	if c.String("flint.authenticate.secret") != "" {
		t.Errorf("the executor's config holds the driver's secret")
	}
}

func TestBadValueNamesTheKey(t *testing.T) {
	_, err := Properties{Settings: map[string]string{"flint.locality.wait": "soon"}}.Config()
	if err == nil || !strings.Contains(err.Error(), "flint.locality.wait") || !strings.Contains(err.Error(), `"soon"`) {
		t.Fatalf("error = %v, want it to name flint.locality.wait and its value", err)
	}
}

func TestLogEffectiveRedactsSecrets(t *testing.T) {
	c := config.New()
	for k, v := range map[string]string{"flint.app.name": "logged", "flint.authenticate.secret": "never-logged-0123456789"} {
		if err := c.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	log, hook := test.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	LogEffective(log, c)
	var sawName, sawSecret bool
	for _, e := range hook.AllEntries() {
		line, _ := e.String()
		if strings.Contains(line, "never-logged") {
			t.Fatalf("a secret reached the log: %s", line)
		}
		if e.Level != logrus.DebugLevel {
			t.Errorf("logged at %s, want debug", e.Level)
		}
		sawName = sawName || (strings.Contains(e.Message, "flint.app.name") && e.Data["value"] == "logged")
		sawSecret = sawSecret || (strings.Contains(e.Message, "flint.authenticate.secret") && e.Data["value"] == config.Redaction)
	}
	if !sawName || !sawSecret {
		t.Fatalf("logged settings lack flint.app.name (%v) or the redacted secret (%v)", sawName, sawSecret)
	}
}

func TestContext(t *testing.T) {
	if _, ok := FromContext(context.Background()); ok {
		t.Fatal("a bare context carries a configuration")
	}
	c := config.New()
	if got, ok := FromContext(NewContext(context.Background(), c)); !ok || got != c {
		t.Fatal("NewContext's configuration is not what FromContext returns")
	}
}
