package pi_test

import (
	"context"
	"io"
	"math"
	"testing"

	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/examples/pi"
	"github.com/flint-mesos/flint/framework"
	_ "github.com/flint-mesos/flint/framework/local"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestEstimateIsCloseToPiAndReproducible(t *testing.T) {
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
	defer fc.Stop(context.Background())
	est, err := pi.Estimate(context.Background(), fc, 8, 50_000)
	if err != nil {
		t.Fatal(err)
	}
	// 400,000 samples: standard error ≈ 0.0026, so 0.02 is ~8 sigma.
	if math.Abs(est-math.Pi) > 0.02 {
		t.Fatalf("estimate %f is too far from π", est)
	}
	again, err := pi.Estimate(context.Background(), fc, 8, 50_000)
	if err != nil || again != est {
		t.Fatalf("second run gave %f, %v; want the same %f (seeded slices)", again, err, est)
	}
	if _, err := pi.Estimate(context.Background(), fc, 0, 10); err == nil {
		t.Fatal("0 slices accepted")
	}
}
