package mesosbackend

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesoslabel"
	"github.com/flint-mesos/flint/framework/placement/constraints"
	"github.com/flint-mesos/flint/internal/gcfloor"
	"github.com/flint-mesos/flint/internal/redact"
	"github.com/flint-mesos/flint/uri/fileserver"
)

// minOverheadMB is Spark's MEMORY_OVERHEAD_MINIMUM; the default overhead is
// max(384 MiB, 10% of flint.executor.memory).
const minOverheadMB = 384

// EnvMemLimit is the Go runtime's soft memory limit variable, set for
// executors from flint.executor.memory.
const EnvMemLimit = "GOMEMLIMIT"

// EnvGCPercent is the Go runtime's garbage collection target variable. A
// user who sets it (flint.executorEnv.GOGC) chooses the executors' pacing:
// they then get no heap floor.
const EnvGCPercent = "GOGC"

// Executor are the flint.* keys both backends launch executors with.
type Executor struct {
	URI         string                  // flint.executor.uri; "" = serve the driver's own executable
	SHA256      string                  // flint.executor.sha256; "" = the served executable's, or unchecked
	Command     string                  // flint.mesos.executor.command; default ./<URI's file name>
	ExtraURIs   []string                // flint.mesos.uris
	Env         map[string]string       // flint.executorEnv.* but the secret ones, plus GOMEMLIMIT from flint.executor.memory and the heap floor (gcfloor.EnvFloor)
	SecretEnv   map[string]string       // flint.executorEnv.* entries flint.redaction.regex marks secret
	Secrets     []ExecutorSecret        // flint.mesos.executor.secret.*
	Constraints constraints.Constraints // flint.mesos.constraints
	MemMB       float64                 // flint.executor.memory + flint.mesos.executor.memoryOverhead, in MiB
	ProxyUser   string                  // flint.proxyUser: executors run as it (CommandInfo.user); "" = the framework's user
	Container   Container               // flint.mesos.executor.docker.*, flint.mesos.containerizer, flint.mesos.network.*, flint.mesos.executor.home
	Labels      []mesos.Label           // flint.mesos.task.labels: every executor task's
	// Ports is how many ports each executor takes from its offer's
	// "ports" ranges for its listening servers (Servers, in order);
	// placement names them in its plan. 0 unless executors run in a
	// container (ReadSettings).
	Ports   int
	Servers []Server // the mode's listening servers (CoarseServers, FineServers)
}

// ReadExecutor reads and validates the executor keys. Every problem is
// reported, without a package prefix (callers wrap each error with theirs).
func ReadExecutor(cfg *config.Config) (Executor, []error) {
	e := Executor{
		URI:     strings.TrimSpace(cfg.String("flint.executor.uri")),
		SHA256:  strings.ToLower(strings.TrimSpace(cfg.String("flint.executor.sha256"))),
		Command: strings.TrimSpace(cfg.String("flint.mesos.executor.command")),
		Env:     cfg.Prefixed("flint.executorEnv."),
	}
	var errs []error
	e.SecretEnv, e.Secrets, errs = readSecrets(cfg, e.Env)
	if e.ProxyUser = strings.TrimSpace(cfg.String("flint.proxyUser")); e.ProxyUser != "" && strings.TrimSpace(cfg.String("flint.mesos.principal")) == "" {
		errs = append(errs, fmt.Errorf("flint.proxyUser %q needs flint.mesos.principal: the Mesos master authorizes running tasks as another user per authenticated principal (its run_tasks ACL), and without one any submitter could run as anyone", e.ProxyUser))
	}
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
	setFloor(e.Env, cfg.Size("flint.executor.memory"))
	c, err := constraints.Parse(cfg.String("flint.mesos.constraints"))
	if err != nil {
		errs = append(errs, fmt.Errorf("flint.mesos.constraints: %w", err))
	}
	e.Constraints = c
	var cErrs []error
	e.Container, cErrs = readContainer(cfg)
	errs = append(errs, cErrs...)
	if e.Labels, err = mesoslabel.Parse(cfg.String("flint.mesos.task.labels")); err != nil {
		errs = append(errs, fmt.Errorf("flint.mesos.task.labels: %w", err))
	}
	if e.Container.Docker() && (len(e.SecretEnv) > 0 || len(e.Secrets) > 0) {
		errs = append(errs, fmt.Errorf("flint.mesos.containerizer=docker cannot take the executors' secrets (%s): Mesos resolves secrets only in its own containerizer; set flint.mesos.containerizer=mesos", e.SecretsLog()))
	}
	for u := range strings.SplitSeq(cfg.String("flint.mesos.uris"), ",") {
		if u = strings.TrimSpace(u); u != "" {
			e.ExtraURIs = append(e.ExtraURIs, u)
			if URIBase(u) == "" {
				errs = append(errs, fmt.Errorf("flint.mesos.uris: %q names no file (its path must end in a file name)", redact.URL(u)))
			}
		}
	}
	if e.URI != "" && URIBase(e.URI) == "" {
		errs = append(errs, fmt.Errorf("flint.executor.uri %q names no file (its path must end in a file name)", redact.URL(e.URI)))
	}
	if sum, err := hex.DecodeString(e.SHA256); e.SHA256 != "" && (err != nil || len(sum) != sha256.Size) {
		errs = append(errs, fmt.Errorf("flint.executor.sha256 %q is not a SHA-256 (64 hex digits)", e.SHA256))
	}
	if e.Command == "" && e.URI != "" {
		if IsArchive(e.URI) {
			errs = append(errs, fmt.Errorf("flint.executor.uri %q is an archive: set flint.mesos.executor.command to the executable inside it", redact.URL(e.URI)))
		}
		e.Command = "./" + URIBase(e.URI)
	}
	return e, errs
}

// setFloor gives the executors the heap floor the local backend holds in its process
// (gcfloor.ForMemory of flint.executor.memory; the executor holds it from its first step,
// gcfloor.HoldFromEnv), unless the user chose their pacing with flint.executorEnv.GOGC.
// Executors get no GOGC of their own: the floor gives a scan's collector its room while
// little is live, and the default percent keeps the heap of a process with much live data
// at twice that (docs/benchmarks.md, issue 25).
func setFloor(env map[string]string, executorMemory int64) {
	if _, set := env[EnvGCPercent]; set {
		return
	}
	if _, set := env[gcfloor.EnvFloor]; !set {
		env[gcfloor.EnvFloor] = strconv.FormatInt(gcfloor.ForMemory(executorMemory), 10)
	}
}

// AppSecret is the application's secret for a Mesos backend, one policy
// for both modes: flint.authenticate.secret when set — refused when
// shorter than config.MinSecretLen, as Load refuses it — else a random one
// for this application. It keys the executors' tokens and the shuffle
// token: never log it.
func AppSecret(cfg *config.Config) (string, error) {
	if err := cfg.CheckSecret(); err != nil {
		return "", err
	}
	if s := cfg.String("flint.authenticate.secret"); s != "" {
		return s, nil
	}
	return fileserver.NewToken(), nil
}
