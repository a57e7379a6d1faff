// Package benchbase holds the baselines that shuffle benchmarks measure in
// the same run as the shuffle: a loopback TCP copy of the bytes and a
// write and re-read of them in a directory (the same file system the
// shuffle writes to). Each returns its wall time and the process's CPU
// time (user+system) it took, so a benchmark on a loaded machine can report
// both.
package benchbase
