package coarse_test

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/mesosconn"
)

// NewContext's ctx bounds the start: against a master nobody listens
// for, a context that has ended makes it give up with ctx's error, long
// before flint.mesos.connectTimeout.
func TestNewContextGivesUpWhenItsContextEnds(t *testing.T) {
	cfg := framework.NewConfig()
	for k, v := range map[string]string{"flint.master": "mesos://127.0.0.1:1", "flint.mesos.connectTimeout": "10m"} {
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	fc, err := framework.NewContext(ctx, cfg, framework.WithLogger(log))
	if err == nil {
		_ = fc.Stop(context.Background())
		t.Fatal("NewContext with an ended context started")
	}
	if !errors.Is(err, context.Canceled) || errors.Is(err, mesosconn.ErrStartTimeout) {
		t.Fatalf("NewContext: %v, want context.Canceled", err)
	}
	if el := time.Since(start); el > time.Minute {
		t.Fatalf("NewContext took %v to notice its context had ended", el)
	}
}
