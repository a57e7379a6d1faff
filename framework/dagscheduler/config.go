package dagscheduler

import (
	"errors"
	"fmt"
	"time"

	"github.com/flint-mesos/flint/framework/mapoutput"
)

// Config configures the DAG core. Zero fields take their defaults.
type Config struct {
	// MaxConsecutiveStageAttempts: a stage whose attempts fail this many
	// times in a row (fetch failures) aborts its jobs
	// (flint.stage.maxConsecutiveAttempts, Spark's default 4).
	MaxConsecutiveStageAttempts int
	// ResubmitDelay batches fetch failures before failed stages are
	// resubmitted (Spark's RESUBMIT_TIMEOUT, 200 ms): one lost executor
	// causes many fetch failures in quick succession.
	ResubmitDelay time.Duration
	// ReduceLocality makes reduce tasks prefer the hosts holding at least
	// ReduceLocalityFraction of their input (flint.shuffle.reduceLocality.enabled,
	// default on; Spark's REDUCER_PREF_LOCS_FRACTION 0.2). As in Spark it
	// applies to shuffles with fewer than 1,000 maps and 1,000 reducers.
	DisableReduceLocality  bool
	ReduceLocalityFraction float64
	// UnregisterOutputOnHost: a fetch failure drops every output on the
	// failed host, not only the failed executor's
	// (Spark's spark.files.fetchFailure.unRegisterOutputOnHost, default off).
	UnregisterOutputOnHost bool
	// ShuffleService: an agent's external shuffle service serves map
	// outputs (flint.shuffle.service.enabled), so an executor's loss
	// leaves them registered; only its host's loss, or a fetch failure,
	// unregisters them (Spark's handleExecutorLost with
	// spark.shuffle.service.enabled).
	ShuffleService bool
	// ServerOf names the server a map output's location address reads
	// from (for an agent's shuffle service: the service, shared by all its
	// executors' outputs; for an executor's own server: that server). A
	// fetch failure then drops only the outputs the failed server held:
	// an executor re-registered with its agent's restarted service names
	// the new one in outputs written since, which stay (Spark drops them
	// too, as its services restart at the same address). nil: all one
	// server (the failed executor's outputs, or its host's, all dropped).
	ServerOf func(address string) string
	Tracker  mapoutput.Config
}

// Defaults.
const (
	DefaultMaxConsecutiveStageAttempts = 4
	DefaultResubmitDelay               = 200 * time.Millisecond
	DefaultReduceLocalityFraction      = 0.2
	// reduce locality thresholds (Spark's SHUFFLE_PREF_MAP_THRESHOLD and
	// SHUFFLE_PREF_REDUCE_THRESHOLD)
	localityMaxMaps    = 1000
	localityMaxReduces = 1000
)

// ErrInvalidConfig is returned by New for a bad configuration.
var ErrInvalidConfig = errors.New("dagscheduler: invalid config")

func (c *Config) applyDefaults() {
	if c.MaxConsecutiveStageAttempts == 0 {
		c.MaxConsecutiveStageAttempts = DefaultMaxConsecutiveStageAttempts
	}
	if c.ResubmitDelay == 0 {
		c.ResubmitDelay = DefaultResubmitDelay
	}
	if c.ReduceLocalityFraction == 0 {
		c.ReduceLocalityFraction = DefaultReduceLocalityFraction
	}
}

func (c *Config) validate() error {
	var errs []error
	if c.MaxConsecutiveStageAttempts < 1 {
		errs = append(errs, fmt.Errorf("%w: MaxConsecutiveStageAttempts %d, want >= 1", ErrInvalidConfig, c.MaxConsecutiveStageAttempts))
	}
	if c.ResubmitDelay < 0 {
		errs = append(errs, fmt.Errorf("%w: ResubmitDelay %v is negative", ErrInvalidConfig, c.ResubmitDelay))
	}
	if c.ReduceLocalityFraction < 0 || c.ReduceLocalityFraction > 1 {
		errs = append(errs, fmt.Errorf("%w: ReduceLocalityFraction %v outside [0, 1]", ErrInvalidConfig, c.ReduceLocalityFraction))
	}
	return errors.Join(errs...)
}
