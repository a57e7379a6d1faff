package dataset_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/flint-mesos/flint/framework/dataset"
)

var exampleJobBody = dataset.JobResult("example.jobbody", func(b *dataset.Builder, n int) (string, error) {
	// May: build from the job's arguments and deterministic code.
	nums := dataset.Range(b, int64(n), int64(n)+10, 2)

	// Must freeze what could differ between processes (time, randomness,
	// the environment, files read in the body): executors replaying the
	// body get the driver's value. Handing Parallelize, Range or Sample
	// an unfrozen value fails the job with ErrGraphMismatch.
	seed := dataset.Value(b, "seed", func() uint64 { return uint64(time.Now().UnixNano()) })
	r := rand.New(rand.NewPCG(seed, 1))
	picks := dataset.Value(b, "picks", func() []int64 { return []int64{r.Int64N(1), r.Int64N(1)} })
	picked := dataset.Parallelize(b, picks, 1)

	total, err := dataset.Fold(nums, 0, func(x, y int64) int64 { return x + y })
	if err != nil {
		return "", err
	}
	zeros, err := dataset.Count(picked)
	if err != nil {
		return "", err
	}
	// Side effects between actions run again on every executor replaying
	// the body: do them on the driver only (b.Driver), or print to b.Out
	// (standard output on the driver, discarded on executors).
	if b.Driver() {
		fmt.Fprintln(b.Out(), "driver only: the first action is done")
	}
	return fmt.Sprintf("sum %d, %d picks", total, zeros), nil
})

// What a job body may do, must freeze, and must keep to the driver: the
// body runs on the driver and again on executors that replay it to
// rebuild the graph.
func ExampleValue() {
	fmt.Println(runExample(exampleJobBody))
	// Output:
	// driver only: the first action is done
	// sum 45, 2 picks
}
