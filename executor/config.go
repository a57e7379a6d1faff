package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/task"
)

// DefaultMaxDirectResultSize is the largest result sent inline in a status
// update when Config.MaxDirectResultSize is 0.
const DefaultMaxDirectResultSize = 1 << 20

// Config configures a Runtime.
type Config struct {
	// ExecutorID identifies the executor in every status update. Required.
	ExecutorID string
	// Cores is the number of cpus tasks can occupy at once. Required (> 0).
	Cores int
	// TaskCPUs is the cpus a task occupies when its description says 0
	// (flint.task.cpus); default 1.
	TaskCPUs int
	// MaxResultSize fails tasks whose encoded result is larger
	// (flint.driver.maxResultSize, applied per result); 0 means unlimited.
	MaxResultSize int64
	// MaxDirectResultSize is the largest result sent inline; larger ones are
	// kept for the driver to fetch. 0 means DefaultMaxDirectResultSize.
	MaxDirectResultSize int64
	// Registry holds the task functions; default task.Default().
	Registry *task.Registry
	// Now is the clock for timestamps and metrics; default time.Now.
	Now func() time.Time
	// Logger is optional; nil discards logs.
	Logger logrus.FieldLogger
	// BaseContext returns the context every task's context derives from,
	// carrying what the executor gives its tasks (its shuffle:
	// shuffleenv.NewContext); nil means context.Background. Cancelling it
	// cancels the running tasks.
	BaseContext func() context.Context
	// Job is the job's configuration, put in every task's context
	// (jobconf.NewContext; framework.TaskConfig reads it); nil: none.
	Job *config.Config
	// FilesDir is where the files a job adds are fetched to before the
	// first task that lists them (executor/files); "" is a temporary
	// directory removed by Close. Executors on Mesos use their sandbox.
	FilesDir string
}

// withDefaults validates c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	var errs []error
	if c.ExecutorID == "" {
		errs = append(errs, errors.New("executor: ExecutorID is required"))
	}
	if c.Cores <= 0 {
		errs = append(errs, fmt.Errorf("executor: Cores must be positive, got %d", c.Cores))
	}
	if c.TaskCPUs < 0 {
		errs = append(errs, fmt.Errorf("executor: TaskCPUs must not be negative, got %d", c.TaskCPUs))
	}
	if c.TaskCPUs == 0 {
		c.TaskCPUs = 1
	}
	if c.Cores > 0 && c.TaskCPUs > c.Cores {
		errs = append(errs, fmt.Errorf("executor: TaskCPUs (%d) exceeds Cores (%d)", c.TaskCPUs, c.Cores))
	}
	if c.MaxResultSize < 0 {
		errs = append(errs, fmt.Errorf("executor: MaxResultSize must not be negative, got %d", c.MaxResultSize))
	}
	if c.MaxDirectResultSize < 0 {
		errs = append(errs, fmt.Errorf("executor: MaxDirectResultSize must not be negative, got %d", c.MaxDirectResultSize))
	}
	if c.MaxDirectResultSize == 0 {
		c.MaxDirectResultSize = DefaultMaxDirectResultSize
	}
	if c.Registry == nil {
		c.Registry = task.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.BaseContext == nil {
		c.BaseContext = context.Background
	}
	if c.Logger == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		c.Logger = l
	}
	return c, errors.Join(errs...)
}
