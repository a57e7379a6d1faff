// Package pi estimates π by Monte Carlo sampling, like Spark's SparkPi: each
// task throws darts at the unit square and counts those inside the circle;
// the driver sums the counts.
package pi

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/flint-mesos/flint/framework"
)

// Usage documents the example's arguments.
const Usage = "pi [slices (default 100)] [samples per slice (default 1000000)]"

// Slice is one task's share of the sampling.
type Slice struct {
	Seed    uint64
	Samples int64
}

// Sample counts the points of a Slice that fall inside the unit circle.
var Sample = framework.Register("examples.pi.sample", sample)

func sample(ctx context.Context, s Slice) (int64, error) {
	r := rand.New(rand.NewPCG(s.Seed, s.Seed^0x5851f42d4c957f2d))
	var inside int64
	for i := int64(0); i < s.Samples; i++ {
		if i%65536 == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		x, y := r.Float64()*2-1, r.Float64()*2-1
		if x*x+y*y <= 1 {
			inside++
		}
	}
	return inside, nil
}

// Estimate runs slices tasks of samples darts each and returns the estimate.
func Estimate(ctx context.Context, fc *framework.Context, slices int, samples int64) (float64, error) {
	if slices < 1 || samples < 1 {
		return 0, fmt.Errorf("pi: slices (%d) and samples (%d) must be positive", slices, samples)
	}
	in := make([]Slice, slices)
	for i := range in {
		in[i] = Slice{Seed: uint64(i) + 1, Samples: samples}
	}
	counts, err := framework.Map(ctx, fc, Sample, in, framework.WithJobName("pi"))
	if err != nil {
		return 0, err
	}
	var inside int64
	for _, c := range counts {
		inside += c
	}
	return 4 * float64(inside) / float64(int64(slices)*samples), nil
}

func parseArgs(args []string) (slices int, samples int64, err error) {
	slices, samples = 100, 1_000_000
	if len(args) > 2 {
		return 0, 0, fmt.Errorf("pi: too many arguments; usage: %s", Usage)
	}
	if len(args) > 0 {
		if slices, err = strconv.Atoi(args[0]); err != nil {
			return 0, 0, fmt.Errorf("pi: slices %q: %w", args[0], err)
		}
	}
	if len(args) > 1 {
		if samples, err = strconv.ParseInt(args[1], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("pi: samples %q: %w", args[1], err)
		}
	}
	if slices < 1 || samples < 1 {
		return 0, 0, fmt.Errorf("pi: slices (%d) and samples (%d) must be positive", slices, samples)
	}
	return slices, samples, nil
}

// Check validates the arguments before any cluster starts.
func Check(args []string) error {
	_, _, err := parseArgs(args)
	return err
}

// Main is the driver: it prints the estimate.
func Main(ctx context.Context, fc *framework.Context, args []string) error {
	slices, samples, err := parseArgs(args)
	if err != nil {
		return err
	}
	est, err := Estimate(ctx, fc, slices, samples)
	if err != nil {
		return err
	}
	fmt.Printf("Pi is roughly %.6f (%d slices × %d samples)\n", est, slices, samples)
	return nil
}
