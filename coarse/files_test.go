package coarse_test

import (
	"testing"

	"github.com/flint-mesos/flint/internal/testkit/filescheck"
)

// Files added to a job reach the tasks on minimesos: local files through
// the driver's file server (fetched with a per-executor grant, checked
// against their SHA-256), directories and archives unpacked, remote URLs
// fetched by the executors themselves, each once per executor, also on
// executors that started before the files were added.
func TestAddedFilesReachTasks(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c))
	filescheck.Check(t, r.fc, 4, true)
}

// A remote URL added with #sha256=<digest> is fetched by the executors,
// which verify it: the right content reaches the tasks, other content
// fails the job that needs it, naming the file and the mismatch. (Without
// exclusion: the failing tasks would exclude every executor and the one
// host from the stage, which then waits the unschedulable timeout, 120 s,
// before it fails.)
func TestRemoteFileChecksums(t *testing.T) {
	c := startCluster(t, clusterOpts{})
	r := mustRun(t, mesosURL(c), "flint.excludeOnFailure.enabled=false")
	filescheck.CheckRemoteChecksums(t, r.fc, 4)
}
