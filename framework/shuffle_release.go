package framework

import (
	"time"

	"github.com/flint-mesos/flint/framework/backend"
)

// ReleaseShuffleFiles tells every executor to delete the files of map
// outputs the driver no longer tracks (see ShuffleRelease); the dataset
// layer calls it when a run ends. It is best effort: it returns when the
// driver loop has handed the release to the backend, not when executors
// deleted anything, and an executor that is gone took its files with it. After Stop it does nothing (the
// executors deleted everything when they exited).
func (c *Context) ReleaseShuffleFiles(r backend.ShuffleRelease) {
	c.driver.query(func(core *driverCore, _ time.Time) {
		if !core.stopped {
			core.out.ShuffleReleases = append(core.out.ShuffleReleases, r)
		}
	})
}
