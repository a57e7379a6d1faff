package fine

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesosconn/constraints"
	"github.com/flint-mesos/flint/mesosbackend"
)

// settings are the flint.* keys the fine backend reads, validated once.
type settings struct {
	launch          mesosbackend.Executor // what every executor launch carries: secrets (SecretEnv, Secrets) and ProxyUser
	taskCPUs        int                   // flint.task.cpus
	execCPUs        float64               // flint.mesos.mesosExecutor.cores
	execMemMB       float64               // flint.executor.memory + overhead, in MiB
	constraints     constraints.Constraints
	executorURI     string // flint.executor.uri; "" = serve our own executable
	executorSHA     string // flint.executor.sha256
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
	tls             bool              // flint.network.tls.enabled: result servers serve TLS
	addr            mesosbackend.Addr // flint.driver.host, bindAddress, ports
	logLevel        string
	logFormat       string
}

func readSettings(cfg *config.Config) (settings, error) {
	s := settings{
		taskCPUs:        cfg.Int("flint.task.cpus"),
		execCPUs:        cfg.Float64("flint.mesos.mesosExecutor.cores"),
		idleTimeout:     cfg.Duration("flint.mesos.fine.executorIdleTimeout"),
		holdTime:        cfg.Duration("flint.mesos.fine.offerHoldTime"),
		noFitTimeout:    cfg.Duration("flint.mesos.fine.noFitTimeout"),
		coresMax:        math.Inf(1),
		maxResultSize:   cfg.Size("flint.driver.maxResultSize"),
		maxDirectResult: cfg.Size("flint.task.maxDirectResultSize"),
		networkTimeout:  cfg.Duration("flint.network.timeout"),
		tls:             cfg.Bool("flint.network.tls.enabled"),
		logLevel:        cfg.String("flint.log.level"),
		logFormat:       cfg.String("flint.log.format"),
	}
	var errs []error
	addr, addrErrs := mesosbackend.ReadAddr(cfg)
	s.addr = addr
	for _, err := range addrErrs {
		errs = append(errs, fmt.Errorf("fine: %w", err))
	}
	// An UPDATE event must stay well below mesos-go's 4 MiB record limit.
	s.maxDirectResult = min(max(s.maxDirectResult, 0), contract.MaxInlineResult)
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
	ex, exErrs := mesosbackend.ReadExecutor(cfg)
	s.executorURI, s.executorSHA, s.command, s.extraURIs, s.env = ex.URI, ex.SHA256, ex.Command, ex.ExtraURIs, ex.Env
	s.launch = mesosbackend.Executor{SecretEnv: ex.SecretEnv, Secrets: ex.Secrets, ProxyUser: ex.ProxyUser}
	s.constraints, s.execMemMB = ex.Constraints, ex.MemMB
	for _, err := range exErrs {
		errs = append(errs, fmt.Errorf("fine: %w", err))
	}
	return s, errors.Join(errs...)
}
