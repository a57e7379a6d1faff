// Package threemode runs one dataset test case in each of Flint's three
// ways of running tasks, with one Context per mode shared by every case of
// the test binary, so a suite of many small cases (the ported Spark
// cases in framework/dataset/sparkcases) stays fast:
//
//   - local: local[2,4] — tasks in the driver process, two at a time, each
//     tried up to four times (as Spark's local[N,F]);
//   - coarse: the embedded master (flint.master=embedded) with the
//     coarse-grained backend: executors are real processes (this test
//     binary) started by minimesos agents;
//   - fine: the embedded master with the fine-grained backend
//     (flint.mesos.coarse=false): one Mesos task per Flint task.
//
// Use it from a test package in three steps:
//
//	func TestMain(m *testing.M) { threemode.Main(m) }
//
//	var sumJob = dataset.JobResult("mypkg.sum", func(b *dataset.Builder, n int) (int64, error) {
//		return dataset.Fold(dataset.Range(b, 0, int64(n), 4), 0, func(x, y int64) int64 { return x + y })
//	})
//
//	func TestSum(t *testing.T) {
//		threemode.Run(t, func(t *testing.T, fc *framework.Context) {
//			got, err := sumJob.Run(t.Context(), fc, 100)
//			…compare with the answer computed without Flint…
//		})
//	}
//
// Main makes the test binary an executor when an agent starts it (the
// FLINT_ROLE environment), so jobs registered at init exist on the
// executors; it stops the shared Contexts after the tests and then checks
// for leaked goroutines (goleak). Run runs the case as the subtests
// local, coarse and fine (RunIn picks some); a Context is started the first
// time a case needs its mode, so `go test -run 'X/local'` starts no
// cluster. When a case fails, the driver's log lines written during it are
// logged with it.
//
// Cases share a Context, so they must not change its state for the next
// one (stop it, add listeners they do not remove, exhaust its executors);
// a case that needs its own cluster (killing executors, two hosts) starts
// its own instead. Each mode's Context is started with Conf(mode) plus the
// settings a test binary passes to Configure before the first Run.
package threemode
