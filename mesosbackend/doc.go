// Package mesosbackend is the Mesos backends' shared base: what the coarse- and fine-grained
// backends (packages coarse and fine, its siblings) both do on the driver's side of a Mesos
// framework, over the one Mesos connection (framework/mesosconn), so that the two backends
// share one copy:
//
//   - MasterURL and DriverHost: the master URL mesosconn dials, and the address executors
//     reach the driver at (flint.driver.host, else the local address towards the master);
//   - ReadExecutor: the flint.* keys both backends launch executors with (flint.executor.uri,
//     flint.mesos.executor.command, flint.mesos.uris, flint.executorEnv.*,
//     flint.mesos.constraints, executor memory and its overhead), validated;
//   - ServeExecutor: the executor binary agents fetch, by default the driver's own executable
//     served by a fileserver.Server behind a token that never reaches the logs (WithToken; logged through redact.URL);
//   - Subscribe: the mesosconn configuration and SUBSCRIBE both backends' Start perform;
//   - Owner and Inlet: the owner goroutine's inbox each backend runs on, and the handler
//     that queues the connection's events into it;
//   - ReadSettings: the keys both backends read (Settings, embedded in each one's
//     settings), with the one "no offer fits" timeout (NoFitKey) and its deprecated
//     per-mode keys;
//   - ExecutorSandbox: where an executor's sandbox is (backend.SandboxLocator);
//   - Container and Executor.ContainerInfo/CommandInfo/PortEnv/TaskLabels: the one
//     ContainerInfo coarse and fine executors run in (flint.mesos.executor.docker.*,
//     flint.mesos.containerizer, flint.mesos.network.*, flint.mesos.executor.home), its port
//     mappings from the ports the placement plan took, and the environment telling the
//     executor where its servers listen (contract.EnvShufflePort…);
//   - ShuffleServices: the driver's client of the agents' shuffle services
//     (flint.shuffle.service.enabled) — heartbeats, released shuffles' deletion, the
//     goodbye at stop, and a service reported unreachable after UnreachableAfter failed
//     heartbeats in a row, then probed until it answers again (restarted at the same
//     address) and reported reachable.
//
// Errors carry no package prefix: the backends wrap them with theirs ("coarse: ", "fine: ").
// The backends never import each other; both import this package.
package mesosbackend
