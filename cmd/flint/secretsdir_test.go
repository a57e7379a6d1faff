package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/agent/containerizer"
)

// --secrets-dir gives the agents a file-backed secret resolver on that
// directory; a directory that is not there is refused; without it the
// agents keep Mesos' default resolver.
func TestSecretsDirFlag(t *testing.T) {
	store := t.TempDir()
	a := agentFlags{workDir: t.TempDir(), secretsDir: store}
	ac, err := a.config(logrus.New())
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := ac.SecretResolver.(containerizer.DirSecretResolver); !ok || r.Dir != store {
		t.Fatalf("resolver %#v, want a DirSecretResolver on %s", ac.SecretResolver, store)
	}
	a.secretsDir = filepath.Join(store, "missing")
	if _, err := a.config(logrus.New()); err == nil || !strings.Contains(err.Error(), "--secrets-dir") {
		t.Fatalf("a missing --secrets-dir: %v", err)
	}
	a.secretsDir = ""
	if ac, err := a.config(logrus.New()); err != nil || ac.SecretResolver != nil {
		t.Fatalf("without --secrets-dir: %#v, %v", ac.SecretResolver, err)
	}
}
