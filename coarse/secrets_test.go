package coarse_test

import (
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/agent/containerizer"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
	"github.com/flint-mesos/flint/internal/testkit/secretcheck"
)

// Executor secrets on minimesos: a flint.executorEnv value that
// flint.redaction.regex marks and a value-type Mesos secret (as a variable
// and as a sandbox file) reach the executors as Mesos Secret protos that the
// agent materialises, and no secret value is in /state (master, agents), the
// UI's environment, the driver's log or the agents' sandboxes.
func TestExecutorSecrets(t *testing.T) {
	wd := t.TempDir()
	c := startCluster(t, clusterOpts{workDir: wd})
	r := mustRun(t, mesosURL(c), secretcheck.Conf()...)
	secretcheck.Check(t, r.fc, c.URL(), r.logs.String, wd)
}

// A reference-type Mesos secret (flint.mesos.executor.secret.names) on
// agents that resolve references from a file-backed secret store (as a
// Mesos agent's --secret_resolver module): the executors get the store's
// value as a variable and a sandbox file; the driver sends only the name,
// and the value is in no /state, log, UI or agent file but the secret file.
func TestExecutorSecretReferences(t *testing.T) {
	wd, store := t.TempDir(), t.TempDir()
	secretcheck.WriteStore(t, store)
	c := mesostest.StartCluster(t, mesostest.Cluster{Agents: 2, Resources: "cpus:4;mem:1024;disk:1024;ports:[31000-31100]",
		ShutdownGrace: 2 * time.Second, WorkDir: wd, SecretResolver: containerizer.DirSecretResolver{Dir: store}})
	r := mustRun(t, mesosURL(c), secretcheck.RefConf()...)
	secretcheck.CheckReferences(t, r.fc, c.URL(), r.logs.String, wd)
}
