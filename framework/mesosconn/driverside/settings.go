package driverside

import (
	"fmt"
	"math"
	"strings"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesosconn/constraints"
)

// minOverheadMB is Spark's MEMORY_OVERHEAD_MINIMUM; the default overhead is
// max(384 MiB, 10% of flint.executor.memory).
const minOverheadMB = 384

// EnvMemLimit is the Go runtime's soft memory limit variable, set for
// executors from flint.executor.memory.
const EnvMemLimit = "GOMEMLIMIT"

// Executor are the flint.* keys both backends launch executors with.
type Executor struct {
	URI         string                  // flint.executor.uri; "" = serve the driver's own executable
	Command     string                  // flint.mesos.executor.command; default ./<URI's file name>
	ExtraURIs   []string                // flint.mesos.uris
	Env         map[string]string       // flint.executorEnv.*, plus GOMEMLIMIT from flint.executor.memory
	Constraints constraints.Constraints // flint.mesos.constraints
	MemMB       float64                 // flint.executor.memory + flint.mesos.executor.memoryOverhead, in MiB
}

// ReadExecutor reads and validates the executor keys. Every problem is
// reported, without a package prefix (callers wrap each error with theirs).
func ReadExecutor(cfg *config.Config) (Executor, []error) {
	e := Executor{
		URI:     strings.TrimSpace(cfg.String("flint.executor.uri")),
		Command: strings.TrimSpace(cfg.String("flint.mesos.executor.command")),
		Env:     cfg.Prefixed("flint.executorEnv."),
	}
	var errs []error
	mem := float64(cfg.Size("flint.executor.memory")) / (1 << 20)
	overhead := math.Max(minOverheadMB, 0.10*mem)
	if cfg.IsSet("flint.mesos.executor.memoryOverhead") {
		overhead = float64(cfg.Size("flint.mesos.executor.memoryOverhead")) / (1 << 20)
	}
	e.MemMB = math.Ceil(mem + overhead)
	if _, set := e.Env[EnvMemLimit]; !set && mem >= 1 {
		// Spark gives the JVM -Xmx = spark.executor.memory; the Go analogue
		// is the runtime's soft memory limit, so the GC works harder before
		// the container's limit (memory + overhead) is reached.
		e.Env[EnvMemLimit] = fmt.Sprintf("%dMiB", int64(mem))
	}
	c, err := constraints.Parse(cfg.String("flint.mesos.constraints"))
	if err != nil {
		errs = append(errs, fmt.Errorf("flint.mesos.constraints: %w", err))
	}
	e.Constraints = c
	for u := range strings.SplitSeq(cfg.String("flint.mesos.uris"), ",") {
		if u = strings.TrimSpace(u); u != "" {
			e.ExtraURIs = append(e.ExtraURIs, u)
		}
	}
	if e.Command == "" && e.URI != "" {
		if IsArchive(e.URI) {
			errs = append(errs, fmt.Errorf("flint.executor.uri %q is an archive: set flint.mesos.executor.command to the executable inside it", RedactURI(e.URI)))
		}
		e.Command = "./" + URIBase(e.URI)
	}
	return e, errs
}
