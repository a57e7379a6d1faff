// Package cluster assembles a runnable minimesos: a master serving the Mesos
// scheduler API and the internal agent protocol on one HTTP listener, plus
// any number of in-process agents, each with its own HTTP server for the
// executor API and sandbox files. It backs `flint mesos master`, `flint mesos
// local`, `flint mesos agent` and Flint's `embedded` master.
package cluster
