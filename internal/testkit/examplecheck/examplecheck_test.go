package examplecheck_test

import (
	"context"
	"io"
	"testing"

	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/framework"
	_ "github.com/flint-mesos/flint/framework/local"
	"github.com/flint-mesos/flint/internal/testkit/examplecheck"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestAllInLocalMode(t *testing.T) {
	cfg := framework.NewConfig()
	for _, kv := range [][2]string{{"flint.master", "local[2]"}, {"flint.files.maxPartitionBytes", "16384"}} {
		if err := cfg.Set(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Stop(context.Background())
	examplecheck.All(context.Background(), t, fc)
}
