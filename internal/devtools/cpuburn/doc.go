// Package cpuburn keeps CPUs busy so that `make stress` runs the test
// suites on a loaded machine, where scheduling delays expose races and
// timing assumptions that an idle machine hides. The flint binary runs it
// as a hidden subcommand (.ci/stress):
//
//	flint cpuburn [-procs N] [-max 3h]
//
// It spins one busy goroutine per CPU (-procs, default all) until it gets
// SIGINT or SIGTERM, its parent exits (it is re-parented), or -max
// passes, so that it never outlives the run that started it.
package cpuburn
