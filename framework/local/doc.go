// Package local is the in-process backend for the local, local[N], local[*]
// and local[N,F] masters (Spark's LocalSchedulerBackend): one executor runtime
// named "driver" on host "localhost" with N task slots, fed through the same
// scheduling core and Driver interface the Mesos backends use. The backend
// owns the Context's runtime environment (framework/stagetask.Env, one per
// Context: the dataset layer's cached partitions, broadcasts and rebuilt
// graphs, over the executor's shuffle — shuffle/shuffleenv, not served:
// reducers read the files directly). The runtime's tasks find it in their
// context, the Context reaches it as TaskEnv, and Stop releases it and
// deletes the shuffle's directory, so two local Contexts in one process
// share none of it.
//
// Importing the package registers the backend for backend.MasterLocal.
package local
