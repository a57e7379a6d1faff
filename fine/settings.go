package fine

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	fineexec "github.com/flint-mesos/flint/executor/fine"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/mesosconn/constraints"
	"github.com/flint-mesos/flint/framework/mesosconn/driverside"
)

// settings are the flint.* keys the fine backend reads, validated once.
type settings struct {
	taskCPUs        int     // flint.task.cpus
	execCPUs        float64 // flint.mesos.mesosExecutor.cores
	execMemMB       float64 // flint.executor.memory + overhead, in MiB
	constraints     constraints.Constraints
	executorURI     string // flint.executor.uri; "" = serve our own executable
	command         string // flint.mesos.executor.command
	extraURIs       []string
	env             map[string]string // flint.executorEnv.*
	idleTimeout     time.Duration
	holdTime        time.Duration
	noFitTimeout    time.Duration // flint.mesos.fine.noFitTimeout
	coresMax        float64       // flint.cores.max; +Inf when unset
	maxResultSize   int64
	maxDirectResult int64
	networkTimeout  time.Duration
	driverHost      string
	logLevel        string
	logFormat       string
}

// minOverheadMB is Spark's MEMORY_OVERHEAD_MINIMUM.
const minOverheadMB = 384

func readSettings(cfg *framework.Config) (settings, error) {
	s := settings{
		taskCPUs:        cfg.Int("flint.task.cpus"),
		execCPUs:        cfg.Float64("flint.mesos.mesosExecutor.cores"),
		executorURI:     strings.TrimSpace(cfg.String("flint.executor.uri")),
		command:         strings.TrimSpace(cfg.String("flint.mesos.executor.command")),
		env:             cfg.Prefixed("flint.executorEnv."),
		idleTimeout:     cfg.Duration("flint.mesos.fine.executorIdleTimeout"),
		holdTime:        cfg.Duration("flint.mesos.fine.offerHoldTime"),
		noFitTimeout:    cfg.Duration("flint.mesos.fine.noFitTimeout"),
		coresMax:        math.Inf(1),
		maxResultSize:   cfg.Size("flint.driver.maxResultSize"),
		maxDirectResult: cfg.Size("flint.task.maxDirectResultSize"),
		networkTimeout:  cfg.Duration("flint.network.timeout"),
		driverHost:      strings.TrimSpace(cfg.String("flint.driver.host")),
		logLevel:        cfg.String("flint.log.level"),
		logFormat:       cfg.String("flint.log.format"),
	}
	var errs []error
	mem := float64(cfg.Size("flint.executor.memory")) / (1 << 20)
	overhead := math.Max(minOverheadMB, 0.10*mem)
	if cfg.IsSet("flint.mesos.executor.memoryOverhead") {
		overhead = float64(cfg.Size("flint.mesos.executor.memoryOverhead")) / (1 << 20)
	}
	s.execMemMB = math.Ceil(mem + overhead)
	// An UPDATE event must stay well below mesos-go's 4 MiB record limit.
	s.maxDirectResult = min(max(s.maxDirectResult, 0), fineexec.MaxInlineResult)
	if s.taskCPUs < 1 {
		errs = append(errs, fmt.Errorf("fine: flint.task.cpus=%d must be positive", s.taskCPUs))
	}
	if s.execCPUs < 0 {
		errs = append(errs, fmt.Errorf("fine: flint.mesos.mesosExecutor.cores=%g must not be negative", s.execCPUs))
	}
	if s.idleTimeout < 0 || s.holdTime < 0 {
		errs = append(errs, errors.New("fine: flint.mesos.fine.executorIdleTimeout and flint.mesos.fine.offerHoldTime must not be negative"))
	}
	if s.noFitTimeout <= 0 {
		errs = append(errs, fmt.Errorf("fine: flint.mesos.fine.noFitTimeout=%s must be positive", s.noFitTimeout))
	}
	if cfg.IsSet("flint.cores.max") {
		n := cfg.Int("flint.cores.max")
		s.coresMax = float64(n)
		switch {
		case n < 1:
			errs = append(errs, fmt.Errorf("fine: flint.cores.max=%d must be positive", n))
		case s.coresMax+1e-9 < float64(s.taskCPUs)+s.execCPUs:
			errs = append(errs, fmt.Errorf("fine: flint.cores.max=%d is below flint.task.cpus=%d + flint.mesos.mesosExecutor.cores=%g: no task could ever run", n, s.taskCPUs, s.execCPUs))
		}
	}
	c, err := constraints.Parse(cfg.String("flint.mesos.constraints"))
	if err != nil {
		errs = append(errs, fmt.Errorf("fine: flint.mesos.constraints: %w", err))
	}
	s.constraints = c
	for u := range strings.SplitSeq(cfg.String("flint.mesos.uris"), ",") {
		if u = strings.TrimSpace(u); u != "" {
			s.extraURIs = append(s.extraURIs, u)
		}
	}
	if s.command == "" && s.executorURI != "" {
		if driverside.IsArchive(s.executorURI) {
			errs = append(errs, fmt.Errorf("fine: flint.executor.uri %q is an archive: set flint.mesos.executor.command to the executable inside it", driverside.RedactURI(s.executorURI)))
		}
		s.command = "./" + driverside.URIBase(s.executorURI)
	}
	return s, errors.Join(errs...)
}
