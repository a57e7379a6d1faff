package runcases_test

import (
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// seenTask is what one partition's closure learned from its task context.
type seenTask struct {
	Partition, StageAttempt, Attempt int
	StageID                          int
	TaskAttemptID                    uint64
	Records                          []int
	MaxFailures                      int
	File                             string
	FileErr                          string
}

type taskContextArgs struct {
	File    string // the base name of a file added to the Context
	Missing string // a name never added
}

var taskContextJob = dataset.JobResult("runcases.taskcontext", func(b *dataset.Builder, a taskContextArgs) ([]seenTask, error) {
	nums := dataset.Parallelize(b, []int{0, 1, 2, 3, 4, 5, 6, 7}, 4)
	seen := dataset.MapPartitionsWithContext(nums, func(tc dataset.TaskContext, records iter.Seq[int], yield func(seenTask)) error {
		if tc.Partition() == 1 && tc.Attempt() == 0 {
			return errors.New("the first attempt of partition 1 fails on purpose")
		}
		s := seenTask{Partition: tc.Partition(), StageID: tc.StageID(), StageAttempt: tc.StageAttempt(), Attempt: tc.Attempt(),
			TaskAttemptID: tc.TaskAttemptID(), Records: slices.Collect(records), MaxFailures: tc.Config().Int("flint.task.maxFailures")}
		p, err := tc.File(a.File)
		if err != nil {
			return err
		}
		content, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s.File = string(content)
		if _, err := tc.File(a.Missing); err != nil {
			s.FileErr = err.Error()
		}
		yield(s)
		return nil
	}, dataset.Nondeterministic)
	return dataset.Collect(seen)
})

// Spark's TaskContextSuite ("TaskContext.attemptNumber should return
// attempt number, not task id", "TaskContext.stageAttemptNumber getter",
// partitionId) and SparkFilesSuite's SparkFiles.get, through
// MapPartitionsWithContext: every partition learns its index, its
// stage's attempt (0), its own attempt number (1 for the partition
// whose first attempt failed, 0 for the others), a task attempt id of its
// own, the job's configuration and the added file's local copy.
func TestTaskContextGivesPartitionAttemptConfigAndFiles(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		name := fmt.Sprintf("taskctx-%d.txt", time.Now().UnixNano())
		path := filepath.Join(t.TempDir(), name)
		const content = "added for the tasks\n"
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := fc.AddFile(path); err != nil {
			t.Fatal(err)
		}
		got, err := taskContextJob.Run(t.Context(), fc, taskContextArgs{File: name, Missing: "never-added.txt"})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 4 {
			t.Fatalf("%d partitions' records, want 4: %+v", len(got), got)
		}
		ids := map[uint64]bool{}
		for p, s := range got {
			// Spark's slicing of 8 records into 4 partitions
			want := []int{}
			for i := 8 * p / 4; i < 8*(p+1)/4; i++ {
				want = append(want, i)
			}
			wantAttempt := 0
			if p == 1 {
				wantAttempt = 1
			}
			if s.Partition != p || !slices.Equal(s.Records, want) || s.Attempt != wantAttempt || s.StageAttempt != 0 ||
				s.MaxFailures != 4 || s.File != content {
				t.Errorf("partition %d saw %+v; want partition %d, records %v, attempt %d, stage attempt 0, maxFailures 4, file %q",
					p, s, p, want, wantAttempt, content)
			}
			if s.StageID != got[0].StageID {
				t.Errorf("partition %d ran in stage %d, partition 0 in %d", p, s.StageID, got[0].StageID)
			}
			if ids[s.TaskAttemptID] {
				t.Errorf("task attempt id %d seen twice", s.TaskAttemptID)
			}
			ids[s.TaskAttemptID] = true
			if s.FileErr == "" || !contains(s.FileErr, "never-added.txt") {
				t.Errorf("partition %d: File of a name never added gave %q, want an error naming it", p, s.FileErr)
			}
		}
	})
}

var cancelJob = dataset.JobResult("runcases.taskcontext.cancel", func(b *dataset.Builder, dir string) (int, error) {
	nums := dataset.Parallelize(b, []int{0}, 1)
	out := dataset.MapPartitionsWithContext(nums, func(tc dataset.TaskContext, _ iter.Seq[int], yield func(int)) error {
		if err := os.WriteFile(filepath.Join(dir, "started"), nil, 0o644); err != nil {
			return err
		}
		select {
		case <-tc.Context().Done():
			return os.WriteFile(filepath.Join(dir, "cancelled"), []byte(tc.Context().Err().Error()), 0o644)
		case <-time.After(2 * time.Minute):
			return errors.New("the task was never cancelled")
		}
	})
	n, err := dataset.Count(out)
	return int(n), err
})

// Spark's TaskContextSuite "all TaskCompletionListeners should be called
// even if some fail" has no Go counterpart; its cancellation cases
// ("task interruption", JobCancellationSuite) do: a task blocked in a
// closure sees its context done when the job is cancelled, and the run
// returns the cancellation.
func TestTaskContextIsDoneWhenTheJobIsCancelled(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		dir := t.TempDir()
		ctx, cancel := contextWithCancel(t)
		done := make(chan error, 1)
		go func() {
			_, err := cancelJob.Run(ctx, fc, dir)
			done <- err
		}()
		waitfor.True(t, time.Minute, "the task to start", func() bool { return exists(filepath.Join(dir, "started")) })
		cancel()
		if err := <-done; err == nil {
			t.Fatal("the cancelled run returned no error")
		}
		waitfor.True(t, time.Minute, "the task's context to be done", func() bool { return exists(filepath.Join(dir, "cancelled")) })
	})
}
