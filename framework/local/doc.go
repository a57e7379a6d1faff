// Package local is the in-process backend for the local, local[N], local[*]
// and local[N,F] masters (Spark's LocalSchedulerBackend): one executor runtime
// named "driver" on host "localhost" with N task slots, fed through the same
// scheduling core and Driver interface the Mesos backends use. The runtime's
// tasks find its shuffle (shuffle/shuffleenv, not served: reducers read the
// files directly) in their context; Stop deletes its directory.
//
// Importing the package registers the backend for backend.MasterLocal.
package local
