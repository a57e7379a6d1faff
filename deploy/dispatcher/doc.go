// Package dispatcher is Flint's cluster deploy mode, the equivalent of Spark's
// MesosClusterDispatcher: a long-running Mesos framework that accepts submitted
// applications over a REST API in the shape of Spark's submission protocol,
// queues them, runs each application's driver as a Mesos task when an offer fits
// the driver's resources, supervises it, keeps its records on a store so that a
// restart neither loses a queued submission nor starts a second copy of a running
// driver, and shows queued, launched and finished drivers on an HTML page.
//
//	flint submit --deploy-mode cluster ──REST──► Server (rest.go, page.go)
//	   (uploads the binary: binaries.go,            │ token auth, strict JSON
//	    content-addressed, SHA-256 checked)         ▼
//	                                   Dispatcher (dispatcher.go): one goroutine owns
//	                                   the Core (core.go, pure: FIFO queue, max
//	                                   concurrent drivers, states, supervise back-off)
//	                                        │ records ──► Store (store.go: directory)
//	                                        │ offers/updates ◄──► framework/mesosconn
//	                                        ▼
//	                      Mesos task per driver (launch.go): fetches the program from
//	                      the dispatcher's uri/fileserver with a per-driver grant, runs
//	                      `flint dispatcher exec-driver` which checks it is a Flint
//	                      program and execs it with --master and the submission's
//	                      properties (secrets as Mesos SECRET environment variables)
//
// The Core never reads a clock, starts a goroutine or does I/O: time comes in as
// now, and its answers are data (records changed, tasks to kill). The Dispatcher
// is the shell: it feeds the Core the Mesos connection's events, the REST
// server's requests and its own timer, in one goroutine, and writes every changed
// record to the store before it answers a request or launches a task.
//
// With ZooKeeper (ZKStore) several dispatchers may run: an Elector (elect.go)
// lets one lead; the others serve StandbyHandler (503, naming the leader) until
// the leader's session ends, then the next builds its Dispatcher from the
// stored records and subscribes with the stored framework id. A Client given
// several addresses moves on from an unreachable dispatcher or a standby.
package dispatcher
