// Package sparkcases holds Spark's own RDD test cases (RDDSuite,
// PairRDDFunctionsSuite, PartitioningSuite, SortingSuite, BroadcastSuite,
// … in apache/spark core/src/test/scala/org/apache/spark) ported to
// framework/dataset, as tests only. Each case's inputs and the outputs
// Spark asserts are transcribed; the Go is our own. Every case runs in
// the three modes of internal/testkit/threemode — local[2,4] with task retries,
// embedded coarse and embedded fine — each mode's Context shared by the
// whole suite, which keeps it within about a minute.
//
// A case is a registered job (executors rebuild its graph, so register it
// at package level) whose body returns what the test checks, and a test
// that runs it in every mode:
//
//	var basicJob = dataset.JobResult("sparkcases.rdd.basic", func(b *dataset.Builder, _ struct{}) ([]int, error) {
//		return dataset.Collect(dataset.Parallelize(b, []int{1, 2, 3, 4}, 2))
//	})
//
//	func TestRDDBasicOperations(t *testing.T) {
//		threemode.Run(t, func(t *testing.T, fc *framework.Context) {
//			got, err := basicJob.Run(t.Context(), fc, struct{}{})
//			…
//		})
//	}
//
// Name a case's test after Spark's suite and test, and say in its comment
// which Spark test it ports and where Flint deliberately differs.
package sparkcases
