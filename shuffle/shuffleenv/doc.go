// Package shuffleenv is an executor's shuffle: the one object an executor
// process (coarse, fine or the local backend's) holds for the data plane.
//
// Start makes the executor's Store in a directory of its own below
// flint.local.dir (else the Mesos sandbox, else the system's temporary
// directory), a Memory pool of flint.shuffle.memory (else
// flint.shuffle.memoryFraction of flint.executor.memory) shared by its
// tasks, and — unless the executor is the driver's own in local mode — a
// shuffleserver.Server on the executor's host, TLS by default, whose
// Location the executor reports in every map status. Map tasks get
// writers (Writer, CombiningWriter) sized from the pool; reduce tasks Read
// a partition from the driver's map-output Snapshot, same-host outputs
// straight from disk. Release deletes a shuffle the driver no longer
// tracks; HoldsOutputs tells a fine-grained executor not to exit on idle
// while outputs of the application live on it; Close stops serving and
// deletes everything, so nothing of the application is left in the
// sandbox.
//
// With the agent's external shuffle service (Settings.ServiceDir) the
// store lives in the service's directory instead, the service serves it
// and it outlives the executor. The executor registers the application
// with the service at start and again whenever the service restarted
// (registration.go: a new InfoFile, noticed at the next map status,
// namespace location or read), so the outputs it reports from then on
// name the service that serves them; outputs reported before name the
// dead one, and their reducers' fetch failures make the driver recompute
// them.
package shuffleenv
