package dataset_test

import (
	"fmt"
	"iter"

	"github.com/flint-mesos/flint/framework/dataset"
)

var exampleTaskContext = dataset.JobResult("example.taskcontext", func(b *dataset.Builder, _ int) ([]string, error) {
	words := dataset.Parallelize(b, []string{"a", "b", "c", "d"}, 2)
	return dataset.Collect(dataset.MapPartitionsWithContext(words, func(tc dataset.TaskContext, records iter.Seq[string], yield func(string)) error {
		for w := range records {
			if err := tc.Context().Err(); err != nil {
				return err // the task was killed
			}
			yield(fmt.Sprintf("%s in partition %d, attempt %d, master %s", w, tc.Partition(), tc.Attempt(), tc.Config().String("flint.master")))
		}
		return nil
	}))
})

// A closure asks for its task's context with MapPartitionsWithContext:
// the partition it computes, its attempt, a context done when the task is
// killed, the job's configuration and (File) the files added to the
// Context.
func ExampleMapPartitionsWithContext() {
	for _, s := range runExample(exampleTaskContext) {
		fmt.Println(s)
	}
	// Output:
	// a in partition 0, attempt 0, master local[2]
	// b in partition 0, attempt 0, master local[2]
	// c in partition 1, attempt 0, master local[2]
	// d in partition 1, attempt 0, master local[2]
}
