// Package burstcheck owns the report of the Docker suites' burst driver
// (e2e/internal/burst, a dynamic-allocation Flint program: a wide stage,
// the executors' release, a second action re-reading its shuffle) and
// the checks the suites that run it make — e2e and
// deploy/minimesos/dockerjob: its sums against plain Go's, and what a run
// with dynamic allocation must show (executors ramped up, all released
// for idleness, new ones for the second action, the map stage run once,
// no failure).
package burstcheck
