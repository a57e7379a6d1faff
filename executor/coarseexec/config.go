package coarseexec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/internal/clock"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
)

// Defaults of Config fields left zero.
const (
	// DefaultTimeout is flint.network.timeout's default.
	DefaultTimeout         = 120 * time.Second
	DefaultRetryMin        = 100 * time.Millisecond
	DefaultRetryMax        = 5 * time.Second
	DefaultShutdownTimeout = 10 * time.Second
	// DefaultFirstTimeout caps Timeout before the first registration.
	DefaultFirstTimeout = 30 * time.Second
	// DefaultChunkSize is the size of one ResultBlock chunk.
	DefaultChunkSize = 1 << 20
	// DefaultMaxMessageSize matches the gateway's: inline results and task
	// inputs up to this size fit in one message.
	DefaultMaxMessageSize = 128 << 20
)

// Config configures Run.
type Config struct {
	// DriverURL is the driver gateway's address, host:port (a grpc:// prefix
	// is accepted). Required.
	DriverURL string
	// ExecutorID is this executor's id, unique per application. Required.
	ExecutorID string
	// Cores is the number of cores tasks may occupy. Required (> 0).
	Cores int
	// Token authenticates the executor to the driver: the ExecutorToken the
	// driver derived for ExecutorID from the application secret. Required.
	Token string
	// DriverCertSHA256, when set, makes the stream TLS and accepts only the
	// driver certificate with this hex SHA-256 (tlspin); empty connects in
	// plaintext.
	DriverCertSHA256 string
	// Host is the host name reported to the driver; default os.Hostname.
	Host string
	// AgentID is the Mesos agent the executor runs on.
	AgentID string
	// ShufflePort, ShuffleHostPort and BindAddress place the shuffle
	// server in a container (contract.EnvShufflePort, EnvShuffleHostPort,
	// EnvBindAddress): it listens on BindAddress:ShufflePort and
	// advertises Host:ShuffleHostPort. Zero: any free port where the
	// driver is reachable from.
	ShufflePort, ShuffleHostPort int
	BindAddress                  string
	// Timeout is how long the driver may stay unreachable (not connected,
	// or not answering a registration) before Run gives up with
	// ErrDriverUnreachable (flint.network.timeout); default DefaultTimeout.
	Timeout time.Duration
	// FirstTimeout is Timeout before the first registration (capped by
	// Timeout); default DefaultFirstTimeout.
	FirstTimeout time.Duration
	// RetryMin and RetryMax bound the exponential backoff between
	// reconnection attempts.
	RetryMin, RetryMax time.Duration
	// ShutdownTimeout bounds how long stopping waits for task goroutines
	// and for the driver to close the stream.
	ShutdownTimeout time.Duration
	// ChunkSize is the size of the chunks indirect results are sent in.
	ChunkSize int
	// MaxMessageSize bounds one gRPC message each way.
	MaxMessageSize int
	// Version is reported to the driver; default the main module's version
	// from the build information.
	Version string
	// Registry holds the task functions; default task.Default().
	Registry *task.Registry
	// Now is the time of task metrics and heartbeats; default Clock.Now.
	Now func() time.Time
	// Clock paces the executor's waits: how long the driver has been
	// unreachable, the backoff between attempts, the registration
	// deadline, the heartbeats and the shutdown deadline; default the wall
	// clock (tests drive a clock.Fake).
	Clock clock.Clock
	// Logger is optional; nil discards logs.
	Logger logrus.FieldLogger
}

func (c Config) withDefaults() (Config, error) {
	var errs []error
	c.DriverURL = strings.TrimPrefix(c.DriverURL, "grpc://")
	if c.DriverURL == "" {
		errs = append(errs, fmt.Errorf("coarse: the driver address is required (%s)", contract.EnvDriverURL))
	}
	if c.ExecutorID == "" {
		errs = append(errs, fmt.Errorf("coarse: the executor id is required (%s)", contract.EnvExecutorID))
	}
	if c.Cores <= 0 {
		errs = append(errs, fmt.Errorf("coarse: cores must be positive, got %d (%s)", c.Cores, contract.EnvCores))
	}
	if c.Token == "" {
		errs = append(errs, fmt.Errorf("coarse: the executor token is required (%s)", contract.EnvToken))
	}
	if c.Timeout < 0 || c.FirstTimeout < 0 || c.RetryMin < 0 || c.RetryMax < 0 || c.ShutdownTimeout < 0 || c.ChunkSize < 0 || c.MaxMessageSize < 0 {
		errs = append(errs, errors.New("coarse: durations and sizes must not be negative"))
	}
	if c.Host == "" {
		c.Host, _ = os.Hostname()
	}
	c.Timeout = cmpOr(c.Timeout, DefaultTimeout)
	c.FirstTimeout = cmpOr(c.FirstTimeout, DefaultFirstTimeout)
	c.RetryMin = cmpOr(c.RetryMin, DefaultRetryMin)
	c.RetryMax = max(cmpOr(c.RetryMax, DefaultRetryMax), c.RetryMin)
	c.ShutdownTimeout = cmpOr(c.ShutdownTimeout, DefaultShutdownTimeout)
	c.ChunkSize = cmpOr(c.ChunkSize, DefaultChunkSize)
	c.MaxMessageSize = cmpOr(c.MaxMessageSize, DefaultMaxMessageSize)
	if c.ChunkSize > c.MaxMessageSize/2 {
		errs = append(errs, fmt.Errorf("coarse: ChunkSize (%d) must be at most half of MaxMessageSize (%d)", c.ChunkSize, c.MaxMessageSize))
	}
	if c.Version == "" {
		c.Version = "unknown"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
			c.Version = bi.Main.Version
		}
	}
	if c.Registry == nil {
		c.Registry = task.Default()
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Now == nil {
		c.Now = c.Clock.Now
	}
	if c.Logger == nil {
		l := logrus.New()
		l.SetOutput(io.Discard)
		c.Logger = l
	}
	return c, errors.Join(errs...)
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// FromEnv builds a Config from the environment the coarse backend sets. It
// reads FLINT_EXECUTOR_TOKEN and then removes it from the process environment, so
// task functions and child processes do not see it. Missing or malformed
// variables are reported together.
func FromEnv() (Config, error) {
	cfg, err := fromEnv(os.Getenv)
	_ = os.Unsetenv(contract.EnvToken)
	return cfg, err
}

func fromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		DriverURL:        getenv(contract.EnvDriverURL),
		ExecutorID:       getenv(contract.EnvExecutorID),
		Token:            getenv(contract.EnvToken),
		DriverCertSHA256: getenv(contract.EnvDriverCert),
		Host:             getenv(contract.EnvHost),
		AgentID:          getenv(contract.EnvAgentID),
	}
	var errs []error
	var ports shuffleenv.Settings
	if err := ports.FromContainer(getenv); err != nil {
		errs = append(errs, fmt.Errorf("coarse: %w", err))
	}
	cfg.ShufflePort, cfg.ShuffleHostPort, cfg.BindAddress = ports.Port, ports.HostPort, ports.Bind
	if v := getenv(contract.EnvCores); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("coarse: %s=%q is not a whole number", contract.EnvCores, v))
		}
		cfg.Cores = n
	}
	if v := getenv(contract.EnvTimeout); v != "" {
		d, err := config.ParseDuration(v, time.Second)
		if err != nil {
			errs = append(errs, fmt.Errorf("coarse: %s: %w", contract.EnvTimeout, err))
		}
		cfg.Timeout = d
	}
	if _, err := cfg.withDefaults(); err != nil {
		errs = append(errs, err)
	}
	return cfg, errors.Join(errs...)
}
