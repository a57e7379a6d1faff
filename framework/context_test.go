package framework_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
)

// Stop's ctx bounds the backend's shutdown: an ended one still stops the
// context (jobs then fail with ErrStopped), Stop reports the backend's
// cut-short wait as ctx's error, and a second Stop returns the first's.
func TestStopWithAnEndedContextStillStops(t *testing.T) {
	cfg := framework.NewConfig()
	if err := cfg.Set("flint.master", "local[2]"); err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	first := fc.Stop(ctx)
	if first != nil && !errors.Is(first, context.Canceled) {
		t.Fatalf("Stop with an ended context: %v, want nil or context.Canceled", first)
	}
	if again := fc.Stop(context.Background()); again != first {
		t.Fatalf("second Stop: %v, first: %v", again, first)
	}
	if _, err := framework.Map(context.Background(), fc, square, ints(2)); !errors.Is(err, framework.ErrStopped) {
		t.Fatalf("Map after Stop: %v, want ErrStopped", err)
	}
}
