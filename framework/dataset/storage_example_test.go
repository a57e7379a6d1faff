package dataset_test

import (
	"fmt"
	"os"

	"github.com/flint-mesos/flint/framework/dataset"
)

var examplePersistDiskOnly = dataset.JobResult("example.persistdiskonly", func(b *dataset.Builder, _ int) ([]int64, error) {
	computed := dataset.Counter(b, "squares computed")
	squares := dataset.Map(dataset.Range(b, 1, 5, 2), func(x int64) int64 { computed.Add(1); return x * x })
	// every partition is written to the executor's local directory as it
	// is computed, and read from there by later actions
	dataset.Persist(squares, dataset.DiskOnly)
	first, err := dataset.Collect(squares)
	if err != nil {
		return nil, err
	}
	sum, _, err := dataset.Reduce(squares, func(x, y int64) int64 { return x + y })
	if err != nil {
		return nil, err
	}
	return append(first, sum, computed.Value()), nil
})

// Persist(ds, DiskOnly) keeps partitions on the executors' disks: the
// second action reads them instead of computing the squares again (4
// records computed once).
func ExamplePersist_diskOnly() {
	fmt.Println(runExample(examplePersistDiskOnly))
	// Output: [1 4 9 16 30 4]
}

var exampleCheckpoint = dataset.JobResult("example.checkpoint", func(b *dataset.Builder, _ int) (string, error) {
	// a directory made on the driver, frozen for the executors
	dir := dataset.Value(b, "checkpoint dir", func() string {
		d, err := os.MkdirTemp("", "checkpoint")
		if err != nil {
			panic(err)
		}
		return d
	})
	b.SetCheckpointDir(dir)
	computed := dataset.Counter(b, "squares computed")
	squares := dataset.Checkpoint(dataset.Map(dataset.Range(b, 1, 5, 2), func(x int64) int64 { computed.Add(1); return x * x }))
	before := squares.IsCheckpointed()
	// the first action computes the squares, then a job of its own computes
	// them again and writes them under dir
	all, err := dataset.Collect(squares)
	if err != nil {
		return "", err
	}
	afterFirst := computed.Value()
	// later actions read the files: nothing of the lineage runs
	n, err := dataset.Count(squares)
	if b.Driver() {
		os.RemoveAll(dir)
	}
	return fmt.Sprintf("%v %d records; checkpointed %v then %v; squares computed %d times, then %d more",
		all, n, before, squares.IsCheckpointed(), afterFirst, computed.Value()-afterFirst), err
})

// Checkpoint writes a dataset to reliable storage after the first action
// that computes it and truncates its lineage.
func ExampleCheckpoint() {
	fmt.Println(runExample(exampleCheckpoint))
	// Output: [1 4 9 16] 4 records; checkpointed false then true; squares computed 8 times, then 0 more
}

var exampleCoalesceHosts = dataset.JobResult("example.coalescehosts", func(b *dataset.Builder, _ int) ([][]string, error) {
	// one record per partition, each preferring a host (Spark's makeRDD
	// with location preferences): a1 on host-a, b1 on host-b, a2 on host-a…
	var names []string
	var hosts [][]string
	for i := 1; i <= 5; i++ {
		names = append(names, fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i))
		hosts = append(hosts, []string{"host-a"}, []string{"host-b"})
	}
	files := dataset.ParallelizeWithHosts(b, names, hosts)
	// grouped by preferred host, not by position
	return dataset.Collect(dataset.Glom(dataset.Coalesce(files, 2)))
})

// Coalesce groups partitions that prefer the same host.
func ExampleCoalesce_locality() {
	fmt.Println(runExample(exampleCoalesceHosts))
	// Output: [[a1 a2 a3 a4 a5] [b1 b2 b3 b4 b5]]
}
