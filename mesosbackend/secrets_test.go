package mesosbackend

import (
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/config"
)

func confOf(t *testing.T, kv ...string) *config.Config {
	t.Helper()
	c := config.New()
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		if err := c.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestExecutorSecretsFromConfig(t *testing.T) {
	e, errs := ReadExecutor(confOf(t, "flint.executorEnv.DB_PASSWORD=pw-value-1", "flint.executorEnv.PLAIN=p",
		"flint.mesos.executor.secret.names=/db/a,/db/b", "flint.mesos.executor.secret.envkeys=A,B",
		"flint.mesos.executor.secret.filenames=s/a,s/b"))
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if _, ok := e.Env["DB_PASSWORD"]; ok || e.Env["PLAIN"] != "p" || e.SecretEnv["DB_PASSWORD"] != "pw-value-1" {
		t.Fatalf("env %v, secret env %v", e.Env, e.SecretEnv)
	}
	vars := e.Environment(map[string]string{"PLAIN": "p", "A": "plain-a"})
	byName := map[string]*mesos.Environment_Variable{}
	for _, v := range vars {
		byName[v.Name] = &v
	}
	if len(vars) != 4 || byName["PLAIN"].GetValue() != "p" ||
		byName["A"].GetType() != mesos.Environment_Variable_SECRET || byName["A"].Secret.GetReference().GetName() != "/db/a" || byName["A"].Value != nil ||
		byName["DB_PASSWORD"].GetType() != mesos.Environment_Variable_SECRET || string(byName["DB_PASSWORD"].Secret.GetValue().GetData()) != "pw-value-1" {
		t.Fatalf("environment %+v", vars)
	}
	c := e.ContainerInfo(nil)
	if c == nil || len(c.Volumes) != 2 || c.Volumes[1].ContainerPath != "s/b" || c.Volumes[1].Source.Secret.GetReference().GetName() != "/db/b" || c.Volumes[1].GetMode() != mesos.RO {
		t.Fatalf("container %+v", c)
	}
	if log := e.SecretsLog(); strings.Contains(log, "pw-value-1") || !strings.Contains(log, `reference "/db/b" as env B and file s/b`) {
		t.Fatalf("secrets log %q", log)
	}
}

func TestExecutorSecretsRefused(t *testing.T) {
	for _, c := range []struct {
		conf []string
		want string
	}{
		{[]string{"flint.mesos.executor.secret.names=a", "flint.mesos.executor.secret.values=v", "flint.mesos.executor.secret.envkeys=A"}, "exclusive"},
		{[]string{"flint.mesos.executor.secret.values=v1,v2"}, "neither .envkeys nor .filenames"},
		{[]string{"flint.mesos.executor.secret.values=v1,v2", "flint.mesos.executor.secret.envkeys=A"}, "1 variables for 2 secrets"},
		{[]string{"flint.mesos.executor.secret.values=v1", "flint.mesos.executor.secret.filenames=/etc/x"}, "inside the sandbox"},
		{[]string{"flint.mesos.executor.secret.envkeys=A"}, "neither .names nor .values"},
	} {
		_, errs := ReadExecutor(confOf(t, c.conf...))
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want) || strings.Contains(errs[0].Error(), "v1") {
			t.Errorf("%v: %v, want one error with %q and no value", c.conf, errs, c.want)
		}
	}
}
