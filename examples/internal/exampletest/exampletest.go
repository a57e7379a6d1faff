// Package exampletest starts local contexts and reads outputs for the
// examples' tests.
package exampletest

import (
	"context"
	"io"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	_ "github.com/flint-mesos/flint/framework/local" // local[N]
	"github.com/flint-mesos/flint/internal/testkit/examplecheck"
)

// Local starts a context on local[3] with the settings kv (key, value, …).
func Local(t testing.TB, kv ...string) *framework.Context {
	t.Helper()
	cfg := framework.NewConfig()
	kv = append([]string{"flint.master", "local[3]"}, kv...)
	for i := 0; i < len(kv); i += 2 {
		if err := cfg.Set(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fc.Stop(context.Background()) })
	return fc
}

// Output is the concatenation of dir's part files in name order; it
// fails the test unless dir has _SUCCESS and nothing but part files.
func Output(t testing.TB, dir string) string {
	t.Helper()
	return examplecheck.Output(t, dir)
}
