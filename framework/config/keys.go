package config

import (
	"sort"
	"strings"
	"time"
)

// Kind is the type of a configuration key's value.
type Kind int

// Kinds of configuration values.
const (
	KindString   Kind = iota // any text
	KindInt                  // a whole number
	KindBool                 // true or false
	KindFloat                // a decimal number
	KindSize                 // a byte size such as 512m or 2g; a bare number is in the key's SizeUnit
	KindDuration             // a duration such as 3s or 100ms; a bare number is in the key's DurationUnit
	KindEnum                 // one of Key.Values (case-insensitive)
	KindMaster               // a master URL (see ValidateMaster)
)

// String names the kind as the reference page shows it.
func (k Kind) String() string {
	switch k {
	case KindString:
		return "string"
	case KindInt:
		return "int"
	case KindBool:
		return "bool"
	case KindFloat:
		return "float"
	case KindSize:
		return "size"
	case KindDuration:
		return "duration"
	case KindEnum:
		return "enum"
	case KindMaster:
		return "master URL"
	}
	return "unknown"
}

// Key describes one configuration key. Every key Flint reads is declared once, in the table
// returned by Keys.
type Key struct {
	Name    string // e.g. "flint.executor.memory"; for a Prefix key, the prefix ending in '.'
	Kind    Kind
	Default string // in the form a user would write; "" means unset
	// Inherit names the key whose value applies while this one is unset (Spark's
	// "defaults to flint.locality.wait").
	Inherit string
	Doc     string
	Group   string // section of the reference page
	Secret  bool   // redacted in logs and in Redacted
	Values  []string
	// SizeUnit is the unit of a bare number for KindSize (Spark: memory keys are in MiB).
	SizeUnit SizeUnit
	// DurationUnit is the unit of a bare number for KindDuration (seconds unless the key says ms).
	DurationUnit time.Duration
	// Prefix marks a key family: any non-empty suffix after Name is accepted, with its case kept.
	Prefix bool
	// Min and Max bound a number, size or duration key (inclusive), written as a value of the
	// key; "" for no bound. Load refuses values outside them.
	Min, Max string
	// Check, when set, validates a non-empty value beyond its kind (a regular expression);
	// Expect says what it accepts, for error messages.
	Check  func(v string) error
	Expect string
	// Deprecated names the key that replaces this one: Load warns when
	// this one is set, and its reader honours it only while the
	// replacement is unset.
	Deprecated string
}

// Groups of keys, in the order the reference page lists them.
const (
	GroupApplication = "Application"
	GroupExecution   = "Execution"
	GroupScheduling  = "Scheduling"
	GroupSpeculation = "Speculation"
	GroupExclusion   = "Exclusion on failure"
	GroupShuffle     = "Shuffle"
	GroupAllocation  = "Dynamic allocation"
	GroupMesos       = "Mesos"
	GroupLogging     = "Logging and console"
	GroupUI          = "Web UI, metrics and event log"
	GroupStorage     = "Storage: files and S3"
)

var groupOrder = []string{GroupApplication, GroupExecution, GroupScheduling, GroupSpeculation, GroupExclusion, GroupShuffle, GroupAllocation, GroupStorage, GroupMesos, GroupLogging, GroupUI}

const (
	mesosUsed = " Used by the Mesos backends (coarse and fine)."
	coarse    = " Used by the coarse-grained Mesos backend."
)

var table = []Key{
	// Application.
	{Name: "flint.master", Kind: KindMaster, Default: "embedded", Group: GroupApplication,
		Doc: "Where tasks run: `embedded` (an in-process minimesos master with agents whose executors are real processes; see flint.embedded.*), `mesos://host:port` or `mesos://zk://host:2181,host2:2181/mesos` for a Mesos cluster, or `local`, `local[N]`, `local[*]`, `local[N,F]` (F task attempts) to run tasks in the driver process."},
	{Name: "flint.app.name", Kind: KindString, Default: "flint", Group: GroupApplication,
		Doc: "Application name shown by Mesos, in logs, the UI and the history server's list; `--name` on `flint submit` and on a job binary sets it. Default: the program's name (the example's for `flint submit --example`, the job binary's, the source directory's for `flint submit DIR`); `flint` only where no program name is known."},
	{Name: "flint.app.id", Kind: KindString, Group: GroupApplication, Check: checkAppID, Expect: "letters, digits, '.', '_' and '-' (at most 128, not starting with '.' or '-')",
		Doc: "The application's id: it names the event log (`flint.eventLog.dir/<app-id>`), the UI's and REST API's application and the history server's `/history/<app-id>/`. Default: generated, `app-<UTC time>-<random>` (Spark's style). The dispatcher sets it to the driver's task id (`driver-…-<attempt>`), so that its page links each driver's event log; set it yourself only when every run gets its own (a second application writing the same id fails at start: its event log exists)."},
	{Name: "flint.files", Kind: KindString, Group: GroupApplication,
		Doc: "Comma-separated files every task can read (Spark's `spark.files`; `flint submit --files`): local paths or http(s) URLs, added with `Context.AddFile` when the Context starts; tasks find each with `TaskContextOf(ctx).File(base name)`. In cluster mode `flint submit` uploads the local ones to the dispatcher, which places them in the driver's sandbox (its working directory) too, as Spark's dispatcher does."},
	{Name: "flint.executorEnv.", Kind: KindString, Prefix: true, Group: GroupApplication,
		Doc: "`flint.executorEnv.NAME=value` sets environment variable NAME (case kept) for executors; sent as the Mesos `Environment`."},
	{Name: "flint.redaction.regex", Kind: KindString, Default: DefaultRedactionRegex, Group: GroupApplication, Check: checkRegex, Expect: "a regular expression (Go syntax)",
		Doc: "Keys whose full name matches this regular expression (Go syntax; Spark's `spark.redaction.regex`) are secrets: their values are redacted (`*****`) in every Flint log, the UI and REST environment and executors' logs, travel to executors apart from the plain settings, and `flint.executorEnv.NAME` values among them reach executors as Mesos secrets (value-type `SECRET` environment variables), never as plain environment. Values of six characters or more are also removed from every log line they appear in. Declared secrets (`flint.authenticate.secret`, `flint.mesos.secret`, `flint.mesos.executor.secret.values`) are secret whatever it says."},
	{Name: "flint.proxyUser", Kind: KindString, Group: GroupApplication,
		Doc: "Run the job as this OS user (Spark's `--proxy-user`): executors, and so every task, run as it (Mesos `CommandInfo.user`) and see it in `FLINT_USER`, while the framework registers as the submitter (`flint.mesos.user`). Needs `flint.mesos.principal`: the Mesos master decides per principal whom a framework may run tasks as (its `run_tasks` ACL; minimesos `--acls`), and Flint refuses to proxy without one. A launch the master refuses fails the jobs at once, naming the user. Mesos masters only."},
	{Name: "flint.executor.uri", Kind: KindString, Group: GroupApplication,
		Doc: "URI of the executor binary or tarball agents fetch (saved under its last path segment without query or fragment: Flint sets `output_file`). Unset: the driver serves its own executable through its file server, each launch with its own fetch credential that opens only that file and only until the executor registers, so agents need nothing pre-installed."},
	{Name: "flint.executor.sha256", Kind: KindString, Group: GroupApplication,
		Doc: "Hex SHA-256 of the executor binary that runs (for a tarball, of the executable inside it): executors check their own binary against it before they register and exit with status 65 on a mismatch. Unset with `flint.executor.uri` unset: the hash of the driver's own executable, which it serves; unset with `flint.executor.uri` set: not checked."},
	{Name: "flint.authenticate.secret", Kind: KindString, Secret: true, Group: GroupApplication,
		Doc: "The application's secret, which stays in the driver: each executor authenticates with its own token derived from it (an HMAC of its id). At least 16 characters (a shorter one is refused when the configuration loads). Unset: a random one per application."},
	{Name: "flint.network.tls.enabled", Kind: KindBool, Default: "true", Group: GroupApplication,
		Doc: "Encrypt driver↔executor traffic with TLS, with no certificate infrastructure: in coarse mode the driver makes a self-signed certificate per application and executors accept only that one (its SHA-256 travels with their launch); in fine mode each executor's result server makes one and the driver accepts only that one (its SHA-256 travels with the task's status update). It costs no measurable throughput (docs/benchmarks.md); `false` uses plaintext."},
	{Name: "flint.network.timeout", Kind: KindDuration, Default: "120s", DurationUnit: time.Second, Min: "1ms", Group: GroupApplication,
		Doc: "Default timeout for network interactions between driver and executors."},
	// Execution.
	{Name: "flint.executor.memory", Kind: KindSize, Default: "1g", SizeUnit: MiB, Min: "1", Group: GroupExecution,
		Doc: "Memory per executor (its Go heap, as Spark's is the JVM heap): executors run with `GOMEMLIMIT` set to it unless `flint.executorEnv.GOMEMLIMIT` is given. Every process running tasks keeps a heap floor of 1/16 of it (at most 256 MiB): the collector lets the heap grow to it however little is live, so a task reading data is not interrupted by a collection every few MiB. Mesos executors hold it while they run unless `flint.executorEnv.GOGC` is given (then the collector's pacing is the user's); in local mode, whose tasks run in the driver's process, that process holds it while the Context runs, unless its environment sets `GOGC`. A bare number is in MiB."},
	{Name: "flint.executor.cores", Kind: KindInt, Min: "1", Group: GroupExecution,
		Doc: "Cores per executor. Unset: in coarse mode an executor takes all cores of the offer (up to `flint.cores.max`)." + coarse},
	{Name: "flint.cores.max", Kind: KindInt, Min: "1", Group: GroupExecution,
		Doc: "Most cores the application takes across the cluster. Unset: as many as offered. In fine-grained mode the cpus of running tasks and of the Mesos executors themselves (`flint.mesos.mesosExecutor.cores` each) count; it must be at least `flint.task.cpus` + `flint.mesos.mesosExecutor.cores`." + mesosUsed},
	{Name: "flint.executor.heartbeatInterval", Kind: KindDuration, Default: "10s", DurationUnit: time.Millisecond, Min: "1", Group: GroupExecution,
		Doc: "How often executors report liveness and metrics to the driver. A bare number is in milliseconds."},
	{Name: "flint.task.cpus", Kind: KindInt, Default: "1", Min: "1", Group: GroupExecution,
		Doc: "Cores reserved for each task."},
	{Name: "flint.task.maxFailures", Kind: KindInt, Default: "4", Min: "1", Group: GroupExecution,
		Doc: "Failures of one task before its job is aborted (attempts = failures allowed)."},
	{Name: "flint.task.maxDirectResultSize", Kind: KindSize, Default: "1m", SizeUnit: Byte, Min: "0", Group: GroupExecution,
		Doc: "Results up to this size travel inline with the status update; larger ones are fetched from the executor. A bare number is in bytes."},
	{Name: "flint.driver.maxResultSize", Kind: KindSize, Default: "1g", SizeUnit: Byte, Min: "0", Group: GroupExecution,
		Doc: "Limit on the total size of results of one job collected by the driver; 0 means unlimited. A bare number is in bytes."},
	// Scheduling.
	{Name: "flint.scheduler.mode", Kind: KindEnum, Default: "FIFO", Values: []string{"FIFO", "FAIR"}, Group: GroupScheduling,
		Doc: "How concurrent jobs share executors: in submission order (FIFO) or by fair-share pools (FAIR)."},
	{Name: "flint.scheduler.allocation.file", Kind: KindString, Group: GroupScheduling,
		Doc: "XML file describing FAIR pools (Spark's fairscheduler.xml format)."},
	{Name: "flint.scheduler.pool", Kind: KindString, Default: "default", Group: GroupScheduling,
		Doc: "Pool that jobs are submitted to in FAIR mode."},
	{Name: "flint.scheduler.seed", Kind: KindInt, Default: "0", Group: GroupScheduling,
		Doc: "Seed of the scheduler's random choices; 0 picks a random seed, which is logged so a run can be replayed."},
	{Name: "flint.locality.wait", Kind: KindDuration, Default: "3s", DurationUnit: time.Second, Group: GroupScheduling,
		Doc: "How long to wait for a slot at a better locality level before trying the next one. A bare number is in seconds."},
	{Name: "flint.locality.wait.process", Kind: KindDuration, Inherit: "flint.locality.wait", DurationUnit: time.Second, Group: GroupScheduling,
		Doc: "Locality wait for process-local slots."},
	{Name: "flint.locality.wait.node", Kind: KindDuration, Inherit: "flint.locality.wait", DurationUnit: time.Second, Group: GroupScheduling,
		Doc: "Locality wait for node-local slots."},
	{Name: "flint.locality.wait.rack", Kind: KindDuration, Inherit: "flint.locality.wait", DurationUnit: time.Second, Group: GroupScheduling,
		Doc: "Locality wait for rack-local slots."},
	// Speculation.
	{Name: "flint.speculation", Kind: KindBool, Default: "false", Group: GroupSpeculation,
		Doc: "Re-launch slow-running tasks speculatively on another executor; the first attempt to finish wins."},
	{Name: "flint.speculation.interval", Kind: KindDuration, Default: "100ms", DurationUnit: time.Millisecond, Group: GroupSpeculation,
		Doc: "How often to look for tasks to speculate. A bare number is in milliseconds."},
	{Name: "flint.speculation.quantile", Kind: KindFloat, Default: "0.75", Min: "0", Max: "1", Group: GroupSpeculation,
		Doc: "Fraction of a task set that must be complete before speculation starts for it."},
	{Name: "flint.speculation.multiplier", Kind: KindFloat, Default: "1.5", Min: "1", Group: GroupSpeculation,
		Doc: "How many times slower than the median a task must be to be speculated."},
	{Name: "flint.speculation.minTaskRuntime", Kind: KindDuration, Default: "100ms", DurationUnit: time.Millisecond, Group: GroupSpeculation,
		Doc: "Minimum runtime of a task before it may be speculated. A bare number is in milliseconds."},
	// Exclusion on failure.
	{Name: "flint.excludeOnFailure.enabled", Kind: KindBool, Default: "true", Group: GroupExclusion,
		Doc: "Stop scheduling on executors and nodes that keep failing tasks. Spark defaults to false; Flint enables it because a faulty Mesos agent keeps sending offers, and without exclusion retries keep landing on it. Always off for `local` masters (one executor) and the `embedded` master (all agents on one host)."},
	{Name: "flint.excludeOnFailure.task.maxTaskAttemptsPerExecutor", Kind: KindInt, Default: "1", Group: GroupExclusion,
		Doc: "Attempts of one task on one executor before that executor is excluded for the task."},
	{Name: "flint.excludeOnFailure.task.maxTaskAttemptsPerNode", Kind: KindInt, Default: "2", Group: GroupExclusion,
		Doc: "Attempts of one task on one node before that node is excluded for the task."},
	{Name: "flint.excludeOnFailure.stage.maxFailedTasksPerExecutor", Kind: KindInt, Default: "2", Group: GroupExclusion,
		Doc: "Distinct failed tasks of a stage on one executor before the executor is excluded for the stage."},
	{Name: "flint.excludeOnFailure.stage.maxFailedExecutorsPerNode", Kind: KindInt, Default: "2", Group: GroupExclusion,
		Doc: "Executors excluded for a stage on one node before the node is excluded for the stage."},
	{Name: "flint.excludeOnFailure.application.maxFailedTasksPerExecutor", Kind: KindInt, Default: "2", Group: GroupExclusion,
		Doc: "Failed tasks (in successful task sets) on one executor before it is excluded for the application."},
	{Name: "flint.excludeOnFailure.application.maxFailedExecutorsPerNode", Kind: KindInt, Default: "2", Group: GroupExclusion,
		Doc: "Executors excluded for the application on one node before the node is excluded."},
	{Name: "flint.excludeOnFailure.timeout", Kind: KindDuration, Default: "1h", DurationUnit: time.Second, Group: GroupExclusion,
		Doc: "How long an executor or node stays excluded for the application. A bare number is in seconds."},
	{Name: "flint.scheduler.excludeOnFailure.unschedulableTaskSetTimeout", Kind: KindDuration, Default: "120s", DurationUnit: time.Second, Group: GroupExclusion,
		Doc: "How long a task set that cannot be scheduled anywhere because of exclusions waits before it is aborted. A bare number is in seconds."},
	// Shuffle.
	{Name: "flint.default.parallelism", Kind: KindInt, Min: "1", Group: GroupShuffle,
		Doc: "Partitions of a dataset's wide operations (reduceByKey, join, …) and of `Parallelize`/`Range` when the job does not say. Unset: the cores the backend has (local: its threads), at least 2, as Spark's `spark.default.parallelism`."},
	{Name: "flint.shuffle.memoryFraction", Kind: KindFloat, Default: "0.2", Group: GroupShuffle,
		Doc: "Share of `flint.executor.memory` an executor's running map and reduce tasks may use for shuffle buffers (sorting, map-side combine, fetched blocks), split fairly between running tasks; a task that reaches its share spills sorted runs to disk. Ignored when `flint.shuffle.memory` is set."},
	{Name: "flint.shuffle.memory", Kind: KindSize, SizeUnit: MiB, Group: GroupShuffle,
		Doc: "Shuffle memory per executor as a size, instead of `flint.shuffle.memoryFraction`. A bare number is in MiB."},
	{Name: "flint.storage.memoryFraction", Kind: KindFloat, Default: "0.3", Group: GroupShuffle,
		Doc: "Share of `flint.executor.memory` an executor may hold cached dataset partitions in (`dataset.Cache`, `dataset.Persist`), as Spark's storage memory. A partition that does not fit is written to the executor's local directory when persisted `MemoryAndDisk`, and not kept (recomputed when needed again) when `MemoryOnly`; partitions of older runs are evicted first. Ignored when `flint.storage.memory` is set."},
	{Name: "flint.storage.memory", Kind: KindSize, SizeUnit: MiB, Group: GroupShuffle,
		Doc: "Memory for cached dataset partitions per executor as a size, instead of `flint.storage.memoryFraction`. A bare number is in MiB."},
	{Name: "flint.shuffle.compress.codec", Kind: KindEnum, Default: "s2", Values: []string{"s2", "zstd", "none"}, Group: GroupShuffle,
		Doc: "Compression of shuffle blocks and spills: `s2` (fast, the default), `zstd` (smaller, slower) or `none`. Every frame carries a CRC-32C either way."},
	{Name: "flint.local.dir", Kind: KindString, Group: GroupShuffle,
		Doc: "Directory for an executor's shuffle files and spills (e.g. a tmpfs for small outputs). Unset: the executor's Mesos sandbox, or the system's temporary directory in local mode. Each executor uses a directory of its own below it and removes it when it exits."},
	{Name: "flint.reducer.maxSizeInFlight", Kind: KindSize, Default: "48m", SizeUnit: MiB, Group: GroupShuffle,
		Doc: "Most bytes of shuffle blocks a reduce task fetches at once (always at least one block). A bare number is in MiB."},
	{Name: "flint.reducer.maxReqsInFlight", Kind: KindInt, Default: "64", Group: GroupShuffle,
		Doc: "Most block requests a reduce task has outstanding at once."},
	{Name: "flint.shuffle.io.maxRetries", Kind: KindInt, Default: "3", Group: GroupShuffle,
		Doc: "Retries of a failed or corrupt block fetch (a corrupt block is refetched once at most) before the reduce task reports a fetch failure, which makes the driver recompute the map output."},
	{Name: "flint.shuffle.io.retryWait", Kind: KindDuration, Default: "5s", DurationUnit: time.Second, Group: GroupShuffle,
		Doc: "Wait between retries of a block fetch. A bare number is in seconds."},
	{Name: "flint.shuffle.io.connectionTimeout", Kind: KindDuration, Inherit: "flint.network.timeout", DurationUnit: time.Second, Group: GroupShuffle,
		Doc: "How long a block fetch may go without progress (connecting, or between bytes) before it counts as failed. Unset: `flint.network.timeout`. A bare number is in seconds."},
	{Name: "flint.stage.maxConsecutiveAttempts", Kind: KindInt, Default: "4", Min: "1", Group: GroupShuffle,
		Doc: "Failed attempts of one stage in a row (each ended by a fetch failure) before its jobs are aborted. Fetch failures never count towards `flint.task.maxFailures`: the stage is resubmitted instead, after the map outputs it could not read are recomputed."},
	{Name: "flint.shuffle.reduceLocality.enabled", Kind: KindBool, Default: "true", Group: GroupShuffle,
		Doc: "Reduce tasks prefer the hosts that hold at least 20 % of their input's bytes (for shuffles of fewer than 1,000 map and 1,000 reduce partitions, as in Spark)."},
	{Name: "flint.files.fetchFailure.unRegisterOutputOnHost", Kind: KindBool, Default: "false", Group: GroupShuffle,
		Doc: "A fetch failure drops every map output of the failed executor's host, not only the executor's (for hosts whose executors share their shuffle files' fate)."},
	{Name: "flint.shuffle.service.enabled", Kind: KindBool, Default: "false", Group: GroupShuffle,
		Doc: "Executors keep their shuffle files where the agent's external shuffle service (`flint shuffle-service`, run by operators on every agent) serves them, so an executor that ends — released by dynamic allocation, killed, crashed — leaves its map outputs readable and nothing is recomputed; only the loss of the agent loses them (Spark's `spark.shuffle.service.enabled` with `MesosExternalShuffleService`). An executor on an agent without a running service fails to start, naming the missing service."},
	{Name: "flint.shuffle.service.dir", Kind: KindString, Default: "/var/lib/flint/shuffle-service", Group: GroupShuffle,
		Doc: "The agent-local directory of the external shuffle service (its `--dir`): where executors find it (the service's address is in a file there, which a live executor reads again when the service restarts, registering with the new one) and keep their shuffle files while `flint.shuffle.service.enabled` is set. The same path on every agent (Spark finds its service by `spark.shuffle.service.port` instead)."},
	// Mesos.
	{Name: "flint.mesos.coarse", Kind: KindBool, Default: "true", Group: GroupMesos,
		Doc: "Coarse-grained mode: long-running executors per agent that run many tasks. false: fine-grained mode, one Mesos task per Flint task: a finished task's cpus are offered again only at the master's next batch allocation (Apache Mesos: every 1 s, `--allocation_interval`), so fine mode runs at most (free task slots) / (allocation interval) tasks per second — a shorter interval raises that at the cost of more allocator work on the master; coarse mode is not bound by it." + mesosUsed},
	{Name: "flint.mesos.executor.memoryOverhead", Kind: KindSize, SizeUnit: MiB, Min: "0", Group: GroupMesos,
		Doc: "Extra memory requested per executor. Unset: max(384m, 10% of `flint.executor.memory`). A bare number is in MiB." + mesosUsed},
	{Name: "flint.mesos.mesosExecutor.cores", Kind: KindFloat, Default: "0.1", Min: "0", Group: GroupMesos,
		Doc: "Cores the fine-grained Mesos executor itself holds, besides its tasks' cores. Spark's default, 1.0, reserved a core for an idle JVM; Flint's executor is a Go process that idles at next to no CPU, so it holds 0.1 like Mesos' own command executor. Used by the fine-grained Mesos backend."},
	{Name: "flint.mesos.role", Kind: KindString, Group: GroupMesos,
		Doc: "Mesos role(s) the framework subscribes with: one role, or a comma-separated list (`batch,analytics`; blanks around names are ignored) sent as FrameworkInfo.roles with the MULTI_ROLE capability, so offers of every listed role reach the framework and each executor or task uses the resources of one offer's role. Unset is Mesos' default role `*`." + mesosUsed},
	{Name: "flint.mesos.user", Kind: KindString, Group: GroupMesos,
		Doc: "The user the framework registers as (FrameworkInfo.user): agents run its executors and tasks as this user, which must exist on every agent (an agent running as root switches to it; a launch as a user an agent does not know fails, naming the user and the agent). Task code sees it as `FLINT_USER` (Spark's `SPARK_USER`). Unset: `$FLINT_USER`, else the OS user running the driver." + mesosUsed},
	{Name: "flint.mesos.executor.secret.names", Kind: KindString, Group: GroupMesos,
		Doc: "Comma-separated names of secrets in the cluster's secret store (Mesos `Secret` of type `REFERENCE`) for every executor, exposed as `flint.mesos.executor.secret.envkeys` and/or `.filenames` in the same order (Spark's `spark.mesos.executor.secret.names`). The agents need a secret resolver module (Mesos `--secret_resolver`; minimesos `--secrets-dir`, a file-backed store); without one a launch fails, naming the reference. Exclusive with `.values`." + mesosUsed},
	{Name: "flint.mesos.executor.secret.values", Kind: KindString, Secret: true, Group: GroupMesos,
		Doc: "Comma-separated secret values (Mesos `Secret` of type `VALUE`) for every executor, exposed as `.envkeys` and/or `.filenames` in the same order (Spark's `spark.mesos.executor.secret.values`). They travel to the master and agents inside the Mesos `Secret` protos only (never as a plain variable, never in the executors' settings) and are redacted from every log. Exclusive with `.names`." + mesosUsed},
	{Name: "flint.mesos.executor.secret.envkeys", Kind: KindString, Group: GroupMesos,
		Doc: "Comma-separated environment variable names, one per secret of `.names` or `.values`: the executor's process gets each secret in that variable (Mesos `Environment.Variable` of type `SECRET`)." + mesosUsed},
	{Name: "flint.mesos.executor.secret.filenames", Kind: KindString, Group: GroupMesos,
		Doc: "Comma-separated file paths relative to the executor's sandbox, one per secret of `.names` or `.values`: the agent writes each secret there (a Mesos secret volume; minimesos writes the file, readable by the executor's user only)." + mesosUsed},
	{Name: "flint.mesos.principal", Kind: KindString, Group: GroupMesos,
		Doc: "Principal to authenticate to the Mesos master." + mesosUsed},
	{Name: "flint.mesos.secret", Kind: KindString, Secret: true, Group: GroupMesos,
		Doc: "Secret to authenticate to the Mesos master with `flint.mesos.principal`." + mesosUsed},
	{Name: "flint.mesos.secret.file", Kind: KindString, Group: GroupMesos,
		Doc: "File holding the Mesos secret (instead of `flint.mesos.secret`)." + mesosUsed},
	{Name: "flint.mesos.checkpoint", Kind: KindBool, Default: "false", Group: GroupMesos,
		Doc: "Ask agents to checkpoint the framework's tasks so they survive an agent restart." + mesosUsed},
	{Name: "flint.mesos.driver.frameworkId", Kind: KindString, Group: GroupMesos,
		Doc: "Re-register as this existing framework instead of a new one (Spark's `spark.mesos.driver.frameworkId`): a restarted driver takes over the framework a previous driver process left, within its `flint.mesos.failoverTimeout`. The master's tasks of the old driver are reconciled and its executors, which the new driver does not know, are killed. The driver logs its framework id when it registers." + mesosUsed},
	{Name: "flint.mesos.driver.failover", Kind: KindBool, Default: "false", Group: GroupMesos,
		Doc: "`true`: Stop leaves the framework registered (no TEARDOWN) for a successor driver (`flint.mesos.driver.frameworkId`) when `flint.mesos.failoverTimeout` is above 0; the master removes it once that timeout passes without one. `false`: Stop tears the framework down." + mesosUsed},
	{Name: "flint.mesos.failoverTimeout", Kind: KindDuration, Default: "120s", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "How long the master keeps the framework and its tasks after the driver's connection drops; 0 removes them at once. " +
			"Default 120 s, where Spark's client mode uses 0: with 0 any drop ends the application — a network blip, a stream closed after missed heartbeats, " +
			"or a master failover, during which the driver is cut off until the new master is elected (ZooKeeper's session timeout, 10 s by Mesos' default, " +
			"then the election and the driver's re-subscription with backoff) — and the master refuses the re-subscription (\"Framework has been removed\") and kills every executor. " +
			"120 s is `flint.network.timeout`'s default, how long executors already wait for an unreachable driver, so nothing stays alive longer because of it: " +
			"a driver that crashed or was killed (not stopped: `Stop` tears the framework down) leaves its executors until the master removes the framework — measured on Apache Mesos 1.12: about 122 s with the default, 3 s with 0. Set 0 to have a killed driver's executors removed at once. " +
			"Across a master failover no failover timeout holds: Mesos does not carry it to the new leader (MESOS-4659), which keeps a framework whose driver never comes back until it is torn down (`flint.mesos.teardownTimeout`)." +
			" A bare number is in seconds." + mesosUsed},
	{Name: "flint.mesos.teardownTimeout", Kind: KindDuration, Default: "20s", DurationUnit: time.Second, Min: "1ms", Group: GroupMesos,
		Doc: "How long the driver's stop waits to tear the framework down when no master can take the TEARDOWN at once: during a master election it waits for the new leader (ZooKeeper's session timeout, 10 s by Mesos' default, then the master's registry recovery), re-subscribes and sends TEARDOWN, and logs the framework as torn down only once the master accepted it. " +
			"Mesos does not carry a framework's `failover_timeout` across a master failover (MESOS-4659), so a framework not torn down then stays on the new leader, inactive, until removed by hand: when this bound passes the driver says so and names the master's `/teardown` endpoint and the framework id. `Context.Stop`'s own deadline (30 s) also bounds the wait. A bare number is in seconds." + mesosUsed},
	{Name: "flint.mesos.codec", Kind: KindEnum, Default: "protobuf", Values: []string{"protobuf", "json"}, Group: GroupMesos,
		Doc: "The media type the driver speaks with the Mesos master: `protobuf` (the default, as Mesos' own clients) or `json` (readable on the wire). With `json`, enum values newer than the mesos-go protos Flint uses (a Mesos 1.11+ master's `QUOTA_V2` capability, new task state reasons) are kept as unknown numbers, as protobuf keeps them, instead of failing the event." + mesosUsed},
	{Name: "flint.mesos.connectTimeout", Kind: KindDuration, Default: "20s", DurationUnit: time.Second, Min: "1ms", Group: GroupMesos,
		Doc: "How long the driver keeps trying to reach the Mesos master for its first subscription before it fails (one warning says it is retrying); `flint.network.timeout` caps it. A connection lost later is re-established for as long as `flint.mesos.failoverTimeout` lets the master keep the framework. A bare number is in seconds." + mesosUsed},
	{Name: "flint.mesos.constraints", Kind: KindString, Group: GroupMesos,
		Doc: "Attribute constraints on offers, in Spark's syntax: terms separated by `;`, each an attribute name optionally followed by `:` and comma-separated values, e.g. `os:centos7;zone:us-east-1a,us-east-1b;gpu`. " +
			"A term without values requires only the attribute's presence; a TEXT attribute must equal one of the values; a SCALAR attribute must be at least one of them (Spark's semantics: `cpus:4` matches an agent attribute `cpus:4.5`, `cpus:5` does not); " +
			"a RANGES attribute must contain one of them; a SET attribute must contain all of them. Every term must hold." + mesosUsed},
	{Name: "flint.mesos.rejectOfferDuration", Kind: KindDuration, Default: "120s", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "How long declined offers are filtered when the framework has no use for them. A bare number is in seconds." + mesosUsed},
	{Name: "flint.mesos.rejectOfferDurationForUnmetConstraints", Kind: KindDuration, Inherit: "flint.mesos.rejectOfferDuration", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "Filter duration for offers that do not meet `flint.mesos.constraints`." + mesosUsed},
	{Name: "flint.mesos.rejectOfferDurationForReachedMaxCores", Kind: KindDuration, Inherit: "flint.mesos.rejectOfferDuration", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "Filter duration for offers declined because `flint.cores.max` is reached." + mesosUsed},
	{Name: "flint.mesos.uris", Kind: KindString, Group: GroupMesos,
		Doc: "Comma-separated URIs agents fetch into each executor's sandbox." + mesosUsed},
	{Name: "flint.mesos.gpus.max", Kind: KindInt, Default: "0", Min: "0", Group: GroupMesos,
		Doc: "Most GPUs the application takes across the cluster." + coarse},
	{Name: "flint.mesos.executor.command", Kind: KindString, Group: GroupMesos,
		Doc: "Command (run without a shell, in the sandbox) that starts an executor. Unset: `./NAME`, NAME being the file name of `flint.executor.uri`; set it when that URI is an archive, e.g. `./flint-1.0/bin/myjob`. In fine-grained mode it starts the per-agent Mesos executor (with `flint.executor.uri` unset too, the driver's own executable, which the driver serves)." + mesosUsed},
	// Containers (issue 27): Spark's spark.mesos.* container keys.
	{Name: "flint.mesos.executor.docker.image", Kind: KindString, Group: GroupMesos,
		Doc: "Docker image executors (coarse and fine) run in (Spark's `spark.mesos.executor.docker.image`), under `flint.mesos.containerizer`. Their listening servers (the shuffle server; in fine mode also the result server) each take a port from the agent's offered `ports` (the plan names it, never a fixed one; \"why not placed\" says when an agent has too few) and the container maps it to the same number inside; the executor listens on it and advertises its agent's host (on a `flint.mesos.network.name` network, its own address there). The executor binary is still fetched (`flint.executor.uri`, else the driver's own) unless `flint.mesos.executor.home` says the image holds it: an image `FROM scratch` needs a statically linked binary. Under the `docker` containerizer Mesos passes the executor's command after the image name (`docker run … IMAGE /path/flint ARGS`), so the image must not set an `ENTRYPOINT` (it would receive the command as its arguments); `CMD` is replaced." + mesosUsed},
	{Name: "flint.mesos.containerizer", Kind: KindEnum, Default: "docker", Values: []string{"docker", "mesos"}, Group: GroupMesos,
		Doc: "Which Mesos containerizer runs `flint.mesos.executor.docker.image` (Spark's `spark.mesos.containerizer`, same default): `docker` — `ContainerInfo` of type `DOCKER` with a `DockerInfo` (Docker's bridge network, or the user network `flint.mesos.network.name`, with port mappings); `mesos` — type `MESOS` with an `Image` of type `DOCKER` (the host's network, or the CNI network `flint.mesos.network.name` with its port mappings). Mesos resolves secrets only in its own containerizer, so executor secrets (`flint.mesos.executor.secret.*`, secret `flint.executorEnv.*`, storage credentials) need `mesos`." + mesosUsed},
	{Name: "flint.mesos.executor.docker.volumes", Kind: KindString, Group: GroupMesos,
		Doc: "Volumes of the executors' container, in Spark's syntax (`spark.mesos.executor.docker.volumes`): comma-separated `host_path:container_path[:ro|:rw]` (a relative host path is in the sandbox), read-write by default. Spark also takes a bare `container_path`, which Mesos refuses (a volume needs a host path), so Flint refuses it. Needs `flint.mesos.executor.docker.image`; an entry of another form is refused." + mesosUsed},
	{Name: "flint.mesos.executor.docker.parameters", Kind: KindString, Group: GroupMesos,
		Doc: "Extra `docker run` parameters of the executors' container, comma-separated `key=value` (Spark's `spark.mesos.executor.docker.parameters`). Docker containerizer only; an entry without `=` is refused." + mesosUsed},
	{Name: "flint.mesos.executor.docker.forcePullImage", Kind: KindBool, Default: "false", Group: GroupMesos,
		Doc: "Pull the executors' image even when the agent has it (Spark's `spark.mesos.executor.docker.forcePullImage`): `DockerInfo.force_pull_image`, or `Image.cached=false` under the Mesos containerizer." + mesosUsed},
	{Name: "flint.mesos.executor.home", Kind: KindString, Group: GroupMesos,
		Doc: "Absolute directory in `flint.mesos.executor.docker.image` (or, without an image, on every agent) that holds the executor binary (Spark's `spark.mesos.executor.home`): executors run `DIR/NAME` (NAME: the driver executable's file name; `flint.mesos.executor.command` overrides) and nothing is fetched for them. The binary must still pass the SHA-256 check (`flint.executor.sha256`, else the driver's own executable's). Exclusive with `flint.executor.uri`." + mesosUsed},
	{Name: "flint.mesos.network.name", Kind: KindString, Group: GroupMesos,
		Doc: "Network the executors' containers join (Spark's `spark.mesos.network.name`): a CNI network under the Mesos containerizer, a Docker user network under the Docker containerizer; a `NetworkInfo` with this name (and `flint.mesos.network.labels`) and the servers' port mappings. Such a network gives each container an address of its own (Mesos' IP per container), and the executors advertise that address (the one their host name resolves to in the container, as Mesos' executors do) with the container port, so the driver and the other executors must reach the network's addresses; on a network they cannot reach, leave it unset (Docker's bridge: reached at the agent's host and mapped port)." + mesosUsed},
	{Name: "flint.mesos.network.labels", Kind: KindString, Group: GroupMesos,
		Doc: "Labels of the `flint.mesos.network.name` network's `NetworkInfo`, passed to CNI plugins (Spark's `spark.mesos.network.labels`): comma-separated `key:value`, `\\,` and `\\:` for a literal comma or colon." + mesosUsed},
	{Name: "flint.mesos.task.labels", Kind: KindString, Group: GroupMesos,
		Doc: "Mesos labels of every task Flint launches (coarse executors, fine tasks), in Spark's syntax (`spark.mesos.task.labels`): comma-separated `key:value`, `\\,` and `\\:` for a literal comma or colon." + mesosUsed},
	{Name: "flint.mesos.driver.labels", Kind: KindString, Group: GroupMesos,
		Doc: "Mesos labels of the driver (Spark's `spark.mesos.driver.labels`), same syntax as `flint.mesos.task.labels`. In cluster deploy mode the dispatcher puts them on the driver's Mesos task, after its own `flint.dispatcher.submission` label, as Spark's `MesosClusterDispatcher` does, and refuses a malformed list at submission. The driver, in either deploy mode, also puts them on its framework's `FrameworkInfo.labels` (Spark's client mode ignores the key; a client-mode driver has no task of its own, so its framework is what an operator finds by them in the master's `/frameworks`)." + mesosUsed},
	{Name: "flint.mesos.coarse.shutdownTimeout", Kind: KindDuration, Default: "10s", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "How long stopping the driver waits for executors to exit after asking them to stop; stragglers are then killed through Mesos. A bare number is in seconds." + coarse},
	{Name: "flint.mesos.coarse.noExecutorTimeout", Kind: KindDuration, DurationUnit: time.Second, Group: GroupMesos, Deprecated: "flint.mesos.noOfferFitTimeout",
		Doc: "Deprecated: use `flint.mesos.noOfferFitTimeout`, which the coarse-grained backend reads instead of this key while it is unset." + coarse},
	{Name: "flint.mesos.executor.maxFailuresPerAgent", Kind: KindInt, Default: "2", Min: "1", Group: GroupMesos,
		Doc: "Executor failures (exited with an error, crashed at start, lost) on one agent before no more executors are started there for `flint.mesos.executor.agentExclusionTimeout`. Off for the `embedded` master (all agents on one host)." + coarse},
	{Name: "flint.mesos.executor.agentExclusionTimeout", Kind: KindDuration, Default: "10m", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "How long an agent stays excluded after `flint.mesos.executor.maxFailuresPerAgent` executor failures (Spark excludes it for good). A bare number is in seconds." + coarse},
	{Name: "flint.mesos.fine.executorIdleTimeout", Kind: KindDuration, Default: "60s", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "How long a fine-grained Mesos executor stays up with no task before it exits and gives its own cores (`flint.mesos.mesosExecutor.cores`) and memory back to Mesos; 0 keeps it until the driver stops (Spark's behaviour). A bare number is in seconds. Used by the fine-grained Mesos backend."},
	{Name: "flint.mesos.fine.offerHoldTime", Kind: KindDuration, Default: "1s", DurationUnit: time.Millisecond, Group: GroupMesos,
		Doc: "How long the fine-grained backend keeps offers it has no task for, so tasks submitted meanwhile launch at once instead of waiting for the next allocation; then they are declined. 0 declines at once. A bare number is in milliseconds. Used by the fine-grained Mesos backend."},
	{Name: "flint.mesos.fine.noFitTimeout", Kind: KindDuration, DurationUnit: time.Second, Group: GroupMesos, Deprecated: "flint.mesos.noOfferFitTimeout",
		Doc: "Deprecated: use `flint.mesos.noOfferFitTimeout`, which the fine-grained backend reads instead of this key while it is unset. Used by the fine-grained Mesos backend."},
	{Name: "flint.mesos.noOfferFitTimeout", Kind: KindDuration, Default: "60s", Min: "1ms", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "How long tasks may wait, with none of the application's tasks (fine-grained) or executors (coarse-grained) running, while no offer fits (too few cpus for `flint.task.cpus` or `flint.executor.cores`, plus in fine-grained mode `flint.mesos.mesosExecutor.cores` where no executor runs yet; too little memory or too few GPUs for the executor; unmet constraints; excluded agents; no offers at all) before the backend fails the waiting jobs with an error naming what the offers lacked; coarse-grained mode repeats it at this interval, and fails at once when every agent is excluded beyond it. A bare number is in seconds. Replaces `flint.mesos.coarse.noExecutorTimeout` and `flint.mesos.fine.noFitTimeout`." + mesosUsed},
	{Name: "flint.driver.host", Kind: KindString, Group: GroupApplication,
		Doc: "Host name or IP executors and agents use to reach the driver (executor gateway and file server). Unset: the local address the driver uses to reach the Mesos master."},
	{Name: "flint.driver.bindAddress", Kind: KindString, Group: GroupApplication,
		Doc: "Address the driver's servers (executor gateway, file server) listen on, when it differs from the one advertised (`flint.driver.host`), as behind NAT or in a bridge-networked container (Spark's `spark.driver.bindAddress`); the advertised ports must then be forwarded to the same numbers (see `flint.driver.port`). `0.0.0.0` listens on every interface. Unset: `flint.driver.host`."},
	{Name: "flint.driver.port", Kind: KindInt, Default: "0", Min: "0", Max: "65535", Group: GroupApplication,
		Doc: "Port of the driver's executor gateway, which coarse-grained executors connect to (Spark's `spark.driver.port`). 0 picks a free port."},
	{Name: "flint.driver.fileServer.port", Kind: KindInt, Default: "0", Min: "0", Max: "65535", Group: GroupApplication,
		Doc: "Port of the driver's file server, which serves the executor binary to agents. 0 picks a free port."},
	// Embedded master.
	{Name: "flint.embedded.agents", Kind: KindInt, Default: "2", Min: "1", Group: GroupMesos,
		Doc: "Agents of the embedded master (`flint.master=embedded`); they run in the driver process and start executors as real processes."},
	{Name: "flint.embedded.agent.cpus", Kind: KindFloat, Min: "0.1", Group: GroupMesos,
		Doc: "CPUs each embedded agent offers. Unset: the machine's CPUs split evenly across the agents (at least 1 each)."},
	{Name: "flint.embedded.agent.memory", Kind: KindSize, SizeUnit: MiB, Min: "1", Group: GroupMesos,
		Doc: "Memory each embedded agent offers. Unset: the machine's memory split across the agents, but at least one executor's memory plus overhead. A bare number is in MiB."},
	{Name: "flint.embedded.workDir", Kind: KindString, Group: GroupMesos,
		Doc: "Directory for the embedded agents' sandboxes. Unset: a temporary directory removed when the driver stops."},
	{Name: "flint.embedded.allocationInterval", Kind: KindDuration, Default: "50ms", DurationUnit: time.Millisecond, Group: GroupMesos,
		Doc: "Batch allocation interval of the embedded master (freed resources are also offered at once). A bare number is in milliseconds."},
	// Logging and console.
	{Name: "flint.log.level", Kind: KindEnum, Default: "info", Values: []string{"trace", "debug", "info", "warn", "error"}, Group: GroupLogging,
		Doc: "Driver and executor log level."},
	{Name: "flint.log.format", Kind: KindEnum, Default: "auto", Values: []string{"auto", "text", "json"}, Group: GroupLogging,
		Doc: "Log format: `text` (coloured on a terminal), `json`, or `auto` (text, coloured only on a terminal)."},
	{Name: "flint.ui.showConsoleProgress", Kind: KindBool, Default: "true", Group: GroupLogging,
		Doc: "Show a progress bar of running stages on the console (plain lines when not a terminal)."},
	// Web UI, metrics and event log.
	{Name: "flint.ui.enabled", Kind: KindBool, Default: "true", Group: GroupUI,
		Doc: "Serve the driver's web UI, its REST API (`/api/v1`, Spark's monitoring API) and Prometheus metrics (`/metrics`) while the application runs (docs/ui.md)."},
	{Name: "flint.ui.port", Kind: KindInt, Default: "4040", Group: GroupUI,
		Doc: "Port of the web UI. When it is taken the next ones are tried (16 of them, as Spark's `spark.port.maxRetries`), then any free port; the driver logs the URL it got. 0 picks a free port."},
	{Name: "flint.ui.auth", Kind: KindBool, Default: "true", Group: GroupUI,
		Doc: "Require the application's UI token (derived from `flint.authenticate.secret`) for every page, REST call and `/metrics`; the driver writes a sign-in link holding it to a file only its user can read and logs that file's path. `false` serves anyone who can reach the port — job and stage names, task errors and stack traces, executors' stdout/stderr, the configuration with secrets redacted — for trusted networks only."},
	{Name: "flint.ui.retainedJobs", Kind: KindInt, Default: "1000", Group: GroupUI,
		Doc: "Finished jobs the UI remembers before forgetting the oldest (Spark's `spark.ui.retainedJobs`)."},
	{Name: "flint.ui.retainedStages", Kind: KindInt, Default: "1000", Group: GroupUI,
		Doc: "Finished stages (with their tasks) the UI remembers before forgetting the oldest (Spark's `spark.ui.retainedStages`)."},
	{Name: "flint.ui.retainedTasks", Kind: KindInt, Default: "100000", Group: GroupUI,
		Doc: "Ended task attempts of one stage the UI remembers before forgetting the oldest (Spark's `spark.ui.retainedTasks`); the stage's counts and totals stay exact."},
	{Name: "flint.mesos.driver.webui.url", Kind: KindString, Group: GroupUI,
		Doc: "URL Mesos shows as the framework's web UI (FrameworkInfo `webui_url`), e.g. a proxy in front of the driver. Unset: the driver's own UI URL when `flint.ui.enabled`." + mesosUsed},
	{Name: "flint.eventLog.enabled", Kind: KindBool, Default: "false", Group: GroupUI,
		Doc: "Write the application's listener events as JSON lines to `flint.eventLog.dir/<app-id>`, flushed every second, so that `flint history` can show the application after it ends (or while it runs)."},
	{Name: "flint.eventLog.dir", Kind: KindString, Default: "/tmp/flint-events", Group: GroupUI,
		Doc: "Directory event logs are written to; each application gets a subdirectory named by its id."},
	{Name: "flint.eventLog.compress", Kind: KindBool, Default: "false", Group: GroupUI,
		Doc: "Compress event log files with zstd (`.zst`)."},
	{Name: "flint.eventLog.rolling.maxFileSize", Kind: KindSize, Default: "128m", SizeUnit: Byte, Group: GroupUI,
		Doc: "Size of event (uncompressed JSON) after which an event log file is closed and the next one started (Spark's `spark.eventLog.rolling.maxFileSize`). 0 never rolls. A bare number is in bytes."},
}

var (
	byLower  map[string]*Key // lower-case name → key, for exact (non-prefix) keys
	prefixes []*Key
)

func init() {
	table = append(table, storageKeys...)
	table = append(table, allocationKeys...)
	byLower = make(map[string]*Key, len(table))
	for i := range table {
		k := &table[i]
		if k.Prefix {
			prefixes = append(prefixes, k)
			continue
		}
		byLower[strings.ToLower(k.Name)] = k
	}
}

// Keys returns every declared key, sorted by group then name.
func Keys() []Key {
	out := make([]Key, len(table))
	copy(out, table)
	rank := map[string]int{}
	for i, g := range groupOrder {
		rank[g] = i
	}
	sort.SliceStable(out, func(i, j int) bool {
		if rank[out[i].Group] != rank[out[j].Group] {
			return rank[out[i].Group] < rank[out[j].Group]
		}
		return out[i].Name < out[j].Name
	})
	for i := range out {
		out[i].Values = append([]string(nil), out[i].Values...)
	}
	return out
}

// lookupKey resolves name case-insensitively to a declared key. For a prefix key it also returns
// the suffix with its case kept.
func lookupKey(name string) (k *Key, suffix string) {
	lower := strings.ToLower(name)
	if k := byLower[lower]; k != nil {
		return k, ""
	}
	for _, p := range prefixes {
		if len(name) > len(p.Name) && strings.EqualFold(name[:len(p.Name)], p.Name) {
			return p, name[len(p.Name):]
		}
	}
	return nil, ""
}

// mustKey returns the exact key name; unknown names are a programmer error.
func mustKey(name string) *Key {
	k := byLower[strings.ToLower(name)]
	if k == nil {
		panic("config: unknown key " + name)
	}
	return k
}

// Declared reports whether name is a key of the table (an exact key, or an entry of a prefix
// family such as flint.executorEnv.NAME).
func Declared(name string) bool {
	k, _ := lookupKey(name)
	return k != nil
}
