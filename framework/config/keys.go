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
}

// Groups of keys, in the order the reference page lists them.
const (
	GroupApplication = "Application"
	GroupExecution   = "Execution"
	GroupScheduling  = "Scheduling"
	GroupSpeculation = "Speculation"
	GroupExclusion   = "Exclusion on failure"
	GroupMesos       = "Mesos"
	GroupLogging     = "Logging and console"
)

var groupOrder = []string{GroupApplication, GroupExecution, GroupScheduling, GroupSpeculation, GroupExclusion, GroupMesos, GroupLogging}

const (
	mesosUsed = " Used by the Mesos backends (coarse and fine)."
	coarse    = " Used by the coarse-grained Mesos backend."
)

var table = []Key{
	// Application.
	{Name: "flint.master", Kind: KindMaster, Default: "embedded", Group: GroupApplication,
		Doc: "Where tasks run: `embedded` (an in-process minimesos master with agents whose executors are real processes; see flint.embedded.*), `mesos://host:port` or `mesos://zk://host:2181,host2:2181/mesos` for a Mesos cluster, or `local`, `local[N]`, `local[*]`, `local[N,F]` (F task attempts) to run tasks in the driver process."},
	{Name: "flint.app.name", Kind: KindString, Default: "flint", Group: GroupApplication,
		Doc: "Application name shown by Mesos and in logs."},
	{Name: "flint.executorEnv.", Kind: KindString, Prefix: true, Group: GroupApplication,
		Doc: "`flint.executorEnv.NAME=value` sets environment variable NAME (case kept) for executors; sent as the Mesos `Environment`."},
	{Name: "flint.executor.uri", Kind: KindString, Group: GroupApplication,
		Doc: "URI of the executor binary or tarball agents fetch. Unset: the driver serves its own executable through its file server (with a content hash), so agents need nothing pre-installed."},
	{Name: "flint.authenticate.secret", Kind: KindString, Secret: true, Group: GroupApplication,
		Doc: "The application's secret, which stays in the driver: each executor authenticates with its own token derived from it (an HMAC of its id). Unset: a random one per application."},
	{Name: "flint.network.tls.enabled", Kind: KindBool, Default: "true", Group: GroupApplication,
		Doc: "Encrypt driver↔executor traffic with TLS, with no certificate infrastructure: in coarse mode the driver makes a self-signed certificate per application and executors accept only that one (its SHA-256 travels with their launch); in fine mode each executor's result server makes one and the driver accepts only that one (its SHA-256 travels with the task's status update). It costs no measurable throughput (docs/benchmarks.md); `false` uses plaintext."},
	{Name: "flint.network.timeout", Kind: KindDuration, Default: "120s", DurationUnit: time.Second, Group: GroupApplication,
		Doc: "Default timeout for network interactions between driver and executors."},
	// Execution.
	{Name: "flint.executor.memory", Kind: KindSize, Default: "1g", SizeUnit: MiB, Group: GroupExecution,
		Doc: "Memory per executor (its Go heap, as Spark's is the JVM heap): executors run with `GOMEMLIMIT` set to it unless `flint.executorEnv.GOMEMLIMIT` is given. A bare number is in MiB." + mesosUsed},
	{Name: "flint.executor.cores", Kind: KindInt, Group: GroupExecution,
		Doc: "Cores per executor. Unset: in coarse mode an executor takes all cores of the offer (up to `flint.cores.max`)." + coarse},
	{Name: "flint.cores.max", Kind: KindInt, Group: GroupExecution,
		Doc: "Most cores the application takes across the cluster. Unset: as many as offered. In fine-grained mode the cpus of running tasks and of the Mesos executors themselves (`flint.mesos.mesosExecutor.cores` each) count; it must be at least `flint.task.cpus` + `flint.mesos.mesosExecutor.cores`." + mesosUsed},
	{Name: "flint.executor.heartbeatInterval", Kind: KindDuration, Default: "10s", DurationUnit: time.Millisecond, Group: GroupExecution,
		Doc: "How often executors report liveness and metrics to the driver. A bare number is in milliseconds."},
	{Name: "flint.task.cpus", Kind: KindInt, Default: "1", Group: GroupExecution,
		Doc: "Cores reserved for each task."},
	{Name: "flint.task.maxFailures", Kind: KindInt, Default: "4", Group: GroupExecution,
		Doc: "Failures of one task before its job is aborted (attempts = failures allowed)."},
	{Name: "flint.task.maxDirectResultSize", Kind: KindSize, Default: "1m", SizeUnit: Byte, Group: GroupExecution,
		Doc: "Results up to this size travel inline with the status update; larger ones are fetched from the executor. A bare number is in bytes."},
	{Name: "flint.driver.maxResultSize", Kind: KindSize, Default: "1g", SizeUnit: Byte, Group: GroupExecution,
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
	{Name: "flint.speculation.quantile", Kind: KindFloat, Default: "0.75", Group: GroupSpeculation,
		Doc: "Fraction of a task set that must be complete before speculation starts for it."},
	{Name: "flint.speculation.multiplier", Kind: KindFloat, Default: "1.5", Group: GroupSpeculation,
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
	// Mesos.
	{Name: "flint.mesos.coarse", Kind: KindBool, Default: "true", Group: GroupMesos,
		Doc: "Coarse-grained mode: long-running executors per agent that run many tasks. false: fine-grained mode, one Mesos task per Flint task." + mesosUsed},
	{Name: "flint.mesos.executor.memoryOverhead", Kind: KindSize, SizeUnit: MiB, Group: GroupMesos,
		Doc: "Extra memory requested per executor. Unset: max(384m, 10% of `flint.executor.memory`). A bare number is in MiB." + mesosUsed},
	{Name: "flint.mesos.mesosExecutor.cores", Kind: KindFloat, Default: "0.1", Group: GroupMesos,
		Doc: "Cores the fine-grained Mesos executor itself holds, besides its tasks' cores. Spark's default, 1.0, reserved a core for an idle JVM; Flint's executor is a Go process that idles at next to no CPU, so it holds 0.1 like Mesos' own command executor. Used by the fine-grained Mesos backend."},
	{Name: "flint.mesos.role", Kind: KindString, Group: GroupMesos,
		Doc: "Mesos role the framework subscribes with; unset is Mesos' default role `*`." + mesosUsed},
	{Name: "flint.mesos.principal", Kind: KindString, Group: GroupMesos,
		Doc: "Principal to authenticate to the Mesos master." + mesosUsed},
	{Name: "flint.mesos.secret", Kind: KindString, Secret: true, Group: GroupMesos,
		Doc: "Secret to authenticate to the Mesos master with `flint.mesos.principal`." + mesosUsed},
	{Name: "flint.mesos.secret.file", Kind: KindString, Group: GroupMesos,
		Doc: "File holding the Mesos secret (instead of `flint.mesos.secret`)." + mesosUsed},
	{Name: "flint.mesos.checkpoint", Kind: KindBool, Default: "false", Group: GroupMesos,
		Doc: "Ask agents to checkpoint the framework's tasks so they survive an agent restart." + mesosUsed},
	{Name: "flint.mesos.failoverTimeout", Kind: KindDuration, Default: "0s", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "How long the master keeps the framework's tasks after the driver disconnects; 0 tears them down at once. A bare number is in seconds." + mesosUsed},
	{Name: "flint.mesos.constraints", Kind: KindString, Group: GroupMesos,
		Doc: "Attribute constraints on offers, e.g. `os:centos7;zone:us-east-1a,us-east-1b`." + mesosUsed},
	{Name: "flint.mesos.rejectOfferDuration", Kind: KindDuration, Default: "120s", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "How long declined offers are filtered when the framework has no use for them. A bare number is in seconds." + mesosUsed},
	{Name: "flint.mesos.rejectOfferDurationForUnmetConstraints", Kind: KindDuration, Inherit: "flint.mesos.rejectOfferDuration", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "Filter duration for offers that do not meet `flint.mesos.constraints`." + mesosUsed},
	{Name: "flint.mesos.rejectOfferDurationForReachedMaxCores", Kind: KindDuration, Inherit: "flint.mesos.rejectOfferDuration", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "Filter duration for offers declined because `flint.cores.max` is reached." + mesosUsed},
	{Name: "flint.mesos.uris", Kind: KindString, Group: GroupMesos,
		Doc: "Comma-separated URIs agents fetch into each executor's sandbox." + mesosUsed},
	{Name: "flint.mesos.gpus.max", Kind: KindInt, Default: "0", Group: GroupMesos,
		Doc: "Most GPUs the application takes across the cluster." + coarse},
	{Name: "flint.mesos.executor.command", Kind: KindString, Group: GroupMesos,
		Doc: "Command (run without a shell, in the sandbox) that starts an executor. Unset: `./NAME`, NAME being the file name of `flint.executor.uri`; set it when that URI is an archive, e.g. `./flint-1.0/bin/myjob`. In fine-grained mode it starts the per-agent Mesos executor (with `flint.executor.uri` unset too, the driver's own executable, which the driver serves)." + mesosUsed},
	{Name: "flint.mesos.coarse.shutdownTimeout", Kind: KindDuration, Default: "10s", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "How long stopping the driver waits for executors to exit after asking them to stop; stragglers are then killed through Mesos. A bare number is in seconds." + coarse},
	{Name: "flint.mesos.coarse.noExecutorTimeout", Kind: KindDuration, Default: "60s", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "How long tasks may wait while no executor could be started before an error names the resource the offers lack (cpus, mem, gpus, constraints, excluded agents, or no offers at all); repeated at this interval. A bare number is in seconds." + coarse},
	{Name: "flint.mesos.executor.maxFailuresPerAgent", Kind: KindInt, Default: "2", Group: GroupMesos,
		Doc: "Executor failures (exited with an error, crashed at start, lost) on one agent before no more executors are started there for `flint.mesos.executor.agentExclusionTimeout`." + coarse},
	{Name: "flint.mesos.executor.agentExclusionTimeout", Kind: KindDuration, Default: "10m", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "How long an agent stays excluded after `flint.mesos.executor.maxFailuresPerAgent` executor failures (Spark excludes it for good). A bare number is in seconds." + coarse},
	{Name: "flint.mesos.fine.executorIdleTimeout", Kind: KindDuration, Default: "60s", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "How long a fine-grained Mesos executor stays up with no task before it exits and gives its own cores (`flint.mesos.mesosExecutor.cores`) and memory back to Mesos; 0 keeps it until the driver stops (Spark's behaviour). A bare number is in seconds. Used by the fine-grained Mesos backend."},
	{Name: "flint.mesos.fine.offerHoldTime", Kind: KindDuration, Default: "1s", DurationUnit: time.Millisecond, Group: GroupMesos,
		Doc: "How long the fine-grained backend keeps offers it has no task for, so tasks submitted meanwhile launch at once instead of waiting for the next allocation; then they are declined. 0 declines at once. A bare number is in milliseconds. Used by the fine-grained Mesos backend."},
	{Name: "flint.mesos.fine.noFitTimeout", Kind: KindDuration, Default: "60s", DurationUnit: time.Second, Group: GroupMesos,
		Doc: "How long tasks may wait, with none of the application's tasks running, while no offer fits one (too few cpus for `flint.task.cpus` plus, where no executor runs yet, `flint.mesos.mesosExecutor.cores`; too little memory for the executor; unmet constraints; no offers at all) before the backend fails the waiting jobs with an error naming what the offers lacked. A bare number is in seconds. Used by the fine-grained Mesos backend."},
	{Name: "flint.driver.host", Kind: KindString, Group: GroupApplication,
		Doc: "Host name or IP executors and agents use to reach the driver (executor gateway and file server). Unset: the local address the driver uses to reach the Mesos master."},
	{Name: "flint.driver.bindAddress", Kind: KindString, Group: GroupApplication,
		Doc: "Address the driver's servers (executor gateway, file server) listen on, when it differs from the one advertised (`flint.driver.host`), as behind NAT or in a bridge-networked container (Spark's `spark.driver.bindAddress`); the advertised ports must then be forwarded to the same numbers (see `flint.driver.port`). `0.0.0.0` listens on every interface. Unset: `flint.driver.host`."},
	{Name: "flint.driver.port", Kind: KindInt, Default: "0", Group: GroupApplication,
		Doc: "Port of the driver's executor gateway, which coarse-grained executors connect to (Spark's `spark.driver.port`). 0 picks a free port."},
	{Name: "flint.driver.fileServer.port", Kind: KindInt, Default: "0", Group: GroupApplication,
		Doc: "Port of the driver's file server, which serves the executor binary to agents. 0 picks a free port."},
	// Embedded master.
	{Name: "flint.embedded.agents", Kind: KindInt, Default: "2", Group: GroupMesos,
		Doc: "Agents of the embedded master (`flint.master=embedded`); they run in the driver process and start executors as real processes."},
	{Name: "flint.embedded.agent.cpus", Kind: KindFloat, Group: GroupMesos,
		Doc: "CPUs each embedded agent offers. Unset: the machine's CPUs split evenly across the agents (at least 1 each)."},
	{Name: "flint.embedded.agent.memory", Kind: KindSize, SizeUnit: MiB, Group: GroupMesos,
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
}

var (
	byLower  map[string]*Key // lower-case name → key, for exact (non-prefix) keys
	prefixes []*Key
)

func init() {
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
