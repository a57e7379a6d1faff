// Package golden runs step-by-step scenario scripts against a pure core,
// in the style of etcd's datadriven tests: a script is lines of steps
// ("submit job=a parts=2", quoted Go strings kept whole), each followed by
// the lines "> …" it must produce, in order; "#" lines are comments. A
// test gives RunFile (or RunDir) a function that performs one step and
// returns its output lines; mismatches are reported with the script's
// file and line, and with rewrite set the script is written back with the
// actual output instead (review the diff). The DAG core and the task
// scheduler's golden tests use it.
package golden
