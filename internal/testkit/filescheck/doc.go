// Package filescheck is the one scenario that proves files added to a job
// (framework.Context.AddFile, AddDir, AddArchive) reach tasks in every run
// mode: framework (local), coarse and fine tests run Check against their
// backend. Importing it registers its task function, so the executors (the
// test binary) carry it.
package filescheck
