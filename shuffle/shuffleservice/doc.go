// Package shuffleservice is Flint's external shuffle service (Spark's
// MesosExternalShuffleService): one long-running process per agent, run by
// operators (`flint shuffle-service`, under Marathon, systemd or as the
// agent's neighbour), that serves the shuffle files executors of any
// application wrote on that agent — so an executor released by dynamic
// allocation, or killed, leaves its map outputs readable, and the driver
// neither sees a fetch failure nor recomputes them.
//
// # Layout: the local file system is the rendezvous
//
// The service owns a directory (flint.shuffle.service.dir on executors,
// --dir for the service). At start it writes InfoFile there: its address
// with the pin of its self-signed TLS certificate. An executor of an
// application that enables the service reads that file (a process on the
// same host is the only one that can), registers the application by
// writing the SHA-256 of the application's shuffle token into the
// application's directory (created 0700 under apps/, a sticky 01777
// directory as /tmp), and keeps its shuffle store under
// apps/<application>/<executor>/ instead of its sandbox; its map statuses
// name the service's address and the executor's store, so reducers fetch
// from the service whether or not the executor still lives. An executor
// does not delete that store when it ends.
//
// A service that restarts writes a new InfoFile; live executors notice it
// and register with the new service before they report another output
// (package shuffleenv), so their new outputs name it.
//
// # Protocol and security
//
// Blocks are served with package shuffleserver's protocol — the same
// requests, a Bearer token per application, the service's certificate
// pinned by the address — with the executor (and the dataset run's
// namespace) in the query. Every request must carry the application's
// shuffle token, checked in constant time against the registered SHA-256;
// no token, a wrong one or an unregistered application is refused alike.
// The service must run as root or as the user the executors run as, to
// read their 0700 directories.
//
// # Cleanup
//
// The driver (either Mesos backend, through mesosbackend.ShuffleServices)
// sends each service its executors used a heartbeat
// (POST /shuffle-service/v1/apps/<app>/heartbeat) while the application
// runs, deletes a released shuffle's files on every one from every
// executor's store (DELETE …/apps/<app>/shuffles/<id> for the executors'
// own shuffle ids, …/shuffles/<id>?ns=<namespace> for one of a dataset
// run's namespace, …/namespaces/<namespace> for all of it), and the
// application's directory when it ends (DELETE …/apps/<app>). An application the service has not heard from for
// its --app-timeout (a driver killed before it could say goodbye) is
// removed by the service's sweep, as Spark's Mesos shuffle service removes
// an application whose driver stopped its heartbeats. Time comes from an
// injected clock.
package shuffleservice
