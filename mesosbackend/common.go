package mesosbackend

import (
	"fmt"
	"time"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesoslabel"
)

// NoFitKey is the one "no offer fits" timeout of both modes.
const NoFitKey = "flint.mesos.noOfferFitTimeout"

// deprecatedNoFit is each mode's former key for NoFitKey, honoured while
// NoFitKey is unset (config warns when it is set).
var deprecatedNoFit = map[string]string{
	"coarse": "flint.mesos.coarse.noExecutorTimeout",
	"fine":   "flint.mesos.fine.noFitTimeout",
}

// Settings are the flint.* keys both Mesos backends read, validated once:
// each backend embeds them in its own settings beside its mode's keys.
type Settings struct {
	Executor                      // the executor keys (ReadExecutor)
	Addr            Addr          // flint.driver.host, bindAddress, ports (ReadAddr)
	KeepFramework   bool          // Stop leaves the framework for a successor (KeepFramework)
	NoFit           time.Duration // how long tasks wait while no offer fits before the jobs fail
	NoFitKey        string        // the key NoFit came from (NoFitKey or the mode's deprecated one), for messages
	NetworkTimeout  time.Duration // flint.network.timeout
	TLS             bool          // flint.network.tls.enabled
	MaxResultSize   int64         // flint.driver.maxResultSize
	MaxDirectResult int64         // flint.task.maxDirectResultSize
	LogLevel        string        // flint.log.level, for executors
	LogFormat       string        // flint.log.format, for executors
}

// ReadSettings reads the keys both backends share for mode ("coarse" or
// "fine": it picks the deprecated no-fit key honoured). Every problem is
// reported, without a package prefix (callers wrap each error with theirs).
func ReadSettings(cfg *config.Config, mode string) (Settings, []error) {
	s := Settings{
		KeepFramework:   KeepFramework(cfg),
		NoFit:           cfg.Duration(NoFitKey),
		NoFitKey:        NoFitKey,
		NetworkTimeout:  cfg.Duration("flint.network.timeout"),
		TLS:             cfg.Bool("flint.network.tls.enabled"),
		MaxResultSize:   cfg.Size("flint.driver.maxResultSize"),
		MaxDirectResult: cfg.Size("flint.task.maxDirectResultSize"),
		LogLevel:        cfg.String("flint.log.level"),
		LogFormat:       cfg.String("flint.log.format"),
	}
	var errs []error
	if old := deprecatedNoFit[mode]; old != "" && cfg.IsSet(old) && !cfg.Explicit(NoFitKey) {
		s.NoFit, s.NoFitKey = cfg.Duration(old), old
	}
	if _, err := mesoslabel.Parse(cfg.String("flint.mesos.driver.labels")); err != nil {
		errs = append(errs, fmt.Errorf("flint.mesos.driver.labels: %w", err))
	}
	if s.NoFit <= 0 {
		errs = append(errs, fmt.Errorf("%s=%s must be positive", s.NoFitKey, s.NoFit))
	}
	var addrErrs, exErrs []error
	s.Addr, addrErrs = ReadAddr(cfg)
	s.Executor, exErrs = ReadExecutor(cfg)
	s.Servers = CoarseServers
	if mode == "fine" {
		s.Servers = FineServers
	}
	if s.Container.Enabled() {
		s.Ports = len(s.Servers)
	}
	return s, append(append(errs, addrErrs...), exErrs...)
}
