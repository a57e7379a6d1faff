package contract

// EnvRole names the role a binary was started in by an agent; unset (or
// empty) it is a driver.
const EnvRole = "FLINT_ROLE"

// Roles: EnvRole values that make a Flint binary an executor (the root
// package registers their Main functions under them).
const (
	RoleCoarse = "coarse-executor" // a coarse-grained executor (executor/coarseexec)
	RoleFine   = "fine-executor"   // a fine-grained Mesos executor (executor/fineexec)
)

// EnvBinarySHA256 is the environment variable in which the driver puts the
// hex SHA-256 it expects the executor's binary to have (flint.executor.sha256,
// by default the hash of the driver's own executable, which it serves).
const EnvBinarySHA256 = "FLINT_EXECUTOR_SHA256"

// EnvRegistrySHA256 is the environment variable in which the driver puts
// its function registry's fingerprint (task.Registry.Fingerprint: every
// registered function and dataset job): an executor whose registry
// differs — a function or job registered conditionally, or another build
// — is refused before it runs a task.
const EnvRegistrySHA256 = "FLINT_REGISTRY_SHA256"

// ExitBinaryMismatch is the exit status of an executor that refused to run
// because its binary (or its function registry) is not the one the driver
// expects (sysexits' EX_DATAERR). The backends recognise it in the agent's
// report.
const ExitBinaryMismatch = 65

// Environment variables a backend sets for an executor besides the agent's
// MESOS_* ones. Both modes set EnvRole, EnvUser and the log settings; the
// others are the coarse executor's.
const (
	EnvUser       = "FLINT_USER" // the user tasks run as (flint.mesos.user)
	EnvLogLevel   = "FLINT_LOG_LEVEL"
	EnvLogFormat  = "FLINT_LOG_FORMAT"
	EnvDriverURL  = "FLINT_DRIVER_URL"
	EnvExecutorID = "FLINT_EXECUTOR_ID"
	EnvCores      = "FLINT_EXECUTOR_CORES"
	EnvToken      = "FLINT_EXECUTOR_TOKEN"
	EnvDriverCert = "FLINT_DRIVER_CERT_SHA256"
	EnvHost       = "FLINT_EXECUTOR_HOST"
	EnvAgentID    = "FLINT_AGENT_ID"
	EnvTimeout    = "FLINT_NETWORK_TIMEOUT"
	// EnvGCFloor is the heap floor in bytes the executor's collector gets
	// (package internal/gcfloor: ForMemory of flint.executor.memory), in
	// both modes; left out when the user chose the pacing
	// (flint.executorEnv.GOGC).
	EnvGCFloor = "FLINT_GC_FLOOR"
)

// Where an executor's listening servers listen and are reached, set when
// it runs in a container (flint.mesos.executor.docker.image,
// flint.mesos.network.name): each server takes one port of the agent's
// offered "ports" ranges (placement's plan names them), the container
// maps it (Docker's bridge or user network, a CNI network's port mapping)
// or, on the host's network, the server listens on it directly. The
// server listens on EnvBindAddress (when set) and the container port, and
// advertises the executor's host (EnvHost; a fine executor's agent host)
// with the host port. Unset: the server picks a free port, as before.
const (
	EnvBindAddress     = "FLINT_EXECUTOR_BIND_ADDRESS" // "0.0.0.0" when the container has a network of its own
	EnvShufflePort     = "FLINT_SHUFFLE_PORT"          // the shuffle server's port inside the container
	EnvShuffleHostPort = "FLINT_SHUFFLE_HOST_PORT"     // the agent's port it is reached at
	EnvResultPort      = "FLINT_RESULT_PORT"           // a fine executor's result server's port inside the container
	EnvResultHostPort  = "FLINT_RESULT_HOST_PORT"      // the agent's port it is reached at
)

// LabelResults is the TaskStatus label holding the base URL of a fine
// executor's result server on updates whose result the executor kept.
const LabelResults = "flint.results"

// LabelResultsPin is the TaskStatus label holding the SHA-256 of the result
// server's self-signed certificate when it serves TLS; the driver accepts
// only that certificate (framework/tlspin).
const LabelResultsPin = "flint.results.sha256"

// ResultPath is a fine executor's result server's path prefix; a block is
// at ResultPath + block id.
const ResultPath = "/v1/results/"

// MaxInlineResult caps the result a fine executor sends inside a status
// update: the update travels agent → master → driver in one RecordIO
// record of the scheduler stream, which mesos-go limits to 4 MiB.
const MaxInlineResult = 2 << 20
