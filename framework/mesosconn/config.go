package mesosconn

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/user"
	"sort"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesosconn/detector"
)

// Codec is the media type spoken with the master.
type Codec int

const (
	// Protobuf is the default (flint.mesos.codec=protobuf): compact, and enum values newer
	// than mesos-go's protos decode as numbers.
	Protobuf Codec = iota
	// JSON is application/json (flint.mesos.codec=json), for debugging and proxies that only
	// pass JSON. mesos-go's JSON decoder rejects enum values newer than its protos, which Mesos
	// 1.11+ masters send (QUOTA_V2 in MasterInfo); the Conn's decoder keeps them as numbers, as
	// protobuf does.
	JSON
)

// Config is everything a Conn needs. Build it with ConfigFrom, or fill it directly (tests);
// zero fields get the defaults documented on each field.
type Config struct {
	// Master is the master URL (mesos://host:port, mesos://zk://…, http(s)://host:port).
	Master string
	// Detector overrides the leader detection built from Master (tests, embedded masters).
	Detector detector.Detector

	// FrameworkInfo fields.
	Name            string            // default "flint"
	User            string            // default $FLINT_USER, else the current OS user
	Roles           []string          // default ["*"]; sent as FrameworkInfo.roles with MULTI_ROLE
	Principal       string            // also the HTTP basic user when Secret is set
	Secret          string            // HTTP basic password (framework authentication)
	Checkpoint      bool              // agents checkpoint the framework's tasks
	FailoverTimeout time.Duration     // how long the master keeps the tasks of a disconnected framework
	WebUIURL        string            // FrameworkInfo.webui_url
	Hostname        string            // FrameworkInfo.hostname
	Labels          map[string]string // FrameworkInfo.labels
	// Capabilities are added to the ones the Conn always declares (MULTI_ROLE).
	Capabilities []mesos.FrameworkInfo_Capability_Type
	// FrameworkID, when set, fails over to (re-subscribes as) an existing framework.
	FrameworkID string

	Codec Codec
	TLS   *tls.Config // for https:// masters

	// RefuseSeconds is the filter duration sent with Decline, per reason. Missing reasons get
	// DefaultRefuse (a negative value: no filter, the master's default of 5 s).
	RefuseSeconds map[DeclineReason]time.Duration

	// Timing. All durations are measured on Clock.
	StartTimeout       time.Duration // Start fails when not subscribed by then (flint.mesos.connectTimeout); default 20 s
	CallTimeout        time.Duration // per call, and for SUBSCRIBE response headers; default 15 s
	MinBackoff         time.Duration // re-subscription backoff start; default 1 s
	MaxBackoff         time.Duration // re-subscription backoff cap; default 30 s
	MissedHeartbeats   int           // stream silence of this many heartbeat intervals drops it; default 5
	DefaultHeartbeat   time.Duration // used until the master advertises one; default 15 s
	ReconcileInterval  time.Duration // periodic reconciliation; default 10 min
	ReconcileMinDelay  time.Duration // first explicit reconciliation retry; default 5 s
	ReconcileMaxDelay  time.Duration // explicit reconciliation retry cap; default 2 min
	ReviveInterval     time.Duration // REVIVE again when demand is on and no offer came for this long; default 60 s
	RecoveryRetry      time.Duration // re-SUBSCRIBE delay (less jitter) while the leader answers 503 "not finished recovery"; default 500 ms
	TeardownTimeout    time.Duration // Stop's wait for a master to accept TEARDOWN (flint.mesos.teardownTimeout); default 20 s
	BackoffJitter      float64       // fraction of each backoff removed at random; default 0.5
	DisableAutoRevive  bool          // no REVIVE on silence (tests)
	DisablePeriodicRec bool          // no periodic reconciliation (tests)

	// Injected dependencies.
	Clock   Clock              // default the real clock
	Rand    *rand.Rand         // backoff jitter; default seeded from the clock, seed logged
	Logger  logrus.FieldLogger // default a logrus logger at Info
	Metrics Metrics            // counters of offers, declines, resubscriptions; default none
}

// DefaultRefuse asks the master for its default filter (refuse_seconds absent: 5 s).
const DefaultRefuse time.Duration = -1

// Option adjusts a Config built by ConfigFrom.
type Option func(*Config)

// WithLogger sets the logger.
func WithLogger(l logrus.FieldLogger) Option { return func(c *Config) { c.Logger = l } }

// WithClock sets the clock.
func WithClock(cl Clock) Option { return func(c *Config) { c.Clock = cl } }

// WithRand sets the source of backoff jitter.
func WithRand(r *rand.Rand) Option { return func(c *Config) { c.Rand = r } }

// WithDetector overrides the leader detection of the master URL.
func WithDetector(d detector.Detector) Option { return func(c *Config) { c.Detector = d } }

// WithFramework sets FrameworkInfo fields that have no flint.* key: the web UI URL, the
// driver's hostname and labels.
func WithFramework(webUIURL, hostname string, labels map[string]string) Option {
	return func(c *Config) { c.WebUIURL, c.Hostname, c.Labels = webUIURL, hostname, labels }
}

// WithFrameworkID fails over to an existing framework.
func WithFrameworkID(id string) Option { return func(c *Config) { c.FrameworkID = id } }

// WithCapabilities adds FrameworkInfo capabilities (e.g. PARTITION_AWARE, TASK_KILLING_STATE).
func WithCapabilities(caps ...mesos.FrameworkInfo_Capability_Type) Option {
	return func(c *Config) { c.Capabilities = append(c.Capabilities, caps...) }
}

// WithCodec selects the media type.
func WithCodec(codec Codec) Option { return func(c *Config) { c.Codec = codec } }

// ConfigFrom reads the flint.* keys: flint.master, flint.app.name, flint.mesos.user, flint.mesos.role (comma
// separated for several roles), flint.mesos.principal, flint.mesos.secret[.file],
// flint.mesos.checkpoint, flint.mesos.failoverTimeout, flint.mesos.teardownTimeout,
// flint.mesos.rejectOfferDuration[…] and
// flint.mesos.gpus.max (> 0 declares GPU_RESOURCES), flint.mesos.codec,
// flint.mesos.driver.webui.url (webui_url; the driver sets it to its UI's URL when unset) and
// flint.mesos.driver.frameworkId (fail over to that framework).
func ConfigFrom(fc *config.Config, opts ...Option) (Config, error) {
	c := Config{
		Master:          fc.String("flint.master"),
		Name:            fc.String("flint.app.name"),
		User:            fc.String("flint.mesos.user"),
		Principal:       fc.String("flint.mesos.principal"),
		Secret:          fc.String("flint.mesos.secret"),
		Checkpoint:      fc.Bool("flint.mesos.checkpoint"),
		FailoverTimeout: fc.Duration("flint.mesos.failoverTimeout"),
		StartTimeout:    min(fc.Duration("flint.mesos.connectTimeout"), fc.Duration("flint.network.timeout")),
		TeardownTimeout: fc.Duration("flint.mesos.teardownTimeout"),
		WebUIURL:        fc.String("flint.mesos.driver.webui.url"),
		FrameworkID:     strings.TrimSpace(fc.String("flint.mesos.driver.frameworkId")),
		RefuseSeconds: map[DeclineReason]time.Duration{
			DeclineNoDemand:        fc.Duration("flint.mesos.rejectOfferDuration"),
			DeclineUnmetConstraint: fc.Duration("flint.mesos.rejectOfferDurationForUnmetConstraints"),
			DeclineReachedMaxCores: fc.Duration("flint.mesos.rejectOfferDurationForReachedMaxCores"),
		},
	}
	switch codec := fc.String("flint.mesos.codec"); codec {
	case "", "protobuf":
	case "json":
		c.Codec = JSON
	default:
		return Config{}, fmt.Errorf("mesosconn: flint.mesos.codec=%q: want protobuf or json", codec)
	}
	for r := range strings.SplitSeq(fc.String("flint.mesos.role"), ",") {
		if r = strings.TrimSpace(r); r != "" {
			c.Roles = append(c.Roles, r)
		}
	}
	if fc.Int("flint.mesos.gpus.max") > 0 {
		c.Capabilities = append(c.Capabilities, mesos.FrameworkInfo_Capability_GPU_RESOURCES)
	}
	if f := fc.String("flint.mesos.secret.file"); f != "" {
		if c.Secret != "" {
			return Config{}, errors.New("mesosconn: set flint.mesos.secret or flint.mesos.secret.file, not both")
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return Config{}, fmt.Errorf("mesosconn: flint.mesos.secret.file: %w", err)
		}
		c.Secret = strings.TrimRight(string(b), "\r\n")
	}
	if c.Secret != "" && c.Principal == "" {
		return Config{}, errors.New("mesosconn: flint.mesos.secret needs flint.mesos.principal")
	}
	for _, o := range opts {
		o(&c)
	}
	return c, nil
}

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	c.Name = cmp.Or(c.Name, "flint")
	if c.User == "" {
		c.User = DefaultUser()
	}
	if len(c.Roles) == 0 {
		c.Roles = []string{"*"}
	}
	def(&c.StartTimeout, 20*time.Second)
	def(&c.CallTimeout, 15*time.Second)
	def(&c.MinBackoff, time.Second)
	def(&c.MaxBackoff, 30*time.Second)
	def(&c.DefaultHeartbeat, 15*time.Second)
	def(&c.ReconcileInterval, 10*time.Minute)
	def(&c.ReconcileMinDelay, 5*time.Second)
	def(&c.ReconcileMaxDelay, 2*time.Minute)
	def(&c.ReviveInterval, 60*time.Second)
	def(&c.RecoveryRetry, 500*time.Millisecond)
	def(&c.TeardownTimeout, 20*time.Second)
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = c.MinBackoff
	}
	if c.MissedHeartbeats <= 0 {
		c.MissedHeartbeats = 5
	}
	if c.BackoffJitter <= 0 || c.BackoffJitter > 1 {
		c.BackoffJitter = 0.5
	}
	if c.Clock == nil {
		c.Clock = RealClock{}
	}
	if c.Logger == nil {
		c.Logger = logrus.New()
	}
	if c.Rand == nil {
		seed := uint64(c.Clock.Now().UnixNano())
		c.Logger.Debugf("mesosconn: backoff jitter seed %d", seed)
		c.Rand = rand.New(rand.NewPCG(seed, seed>>1))
	}
	return c
}

// DefaultUser is the framework user when none is configured: $FLINT_USER,
// else the current OS user, else $USER, else root.
func DefaultUser() string {
	if u := os.Getenv(contract.EnvUser); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}

// frameworkInfo builds the FrameworkInfo sent with SUBSCRIBE. Flint always declares MULTI_ROLE
// and sends roles (never the deprecated single role field), so offers and their resources carry
// allocation_info, which Take keeps.
func (c Config) frameworkInfo(frameworkID string) *mesos.FrameworkInfo {
	fi := &mesos.FrameworkInfo{
		User:            c.User,
		Name:            c.Name,
		Roles:           append([]string(nil), c.Roles...),
		Checkpoint:      &c.Checkpoint,
		FailoverTimeout: ptr(c.FailoverTimeout.Seconds()),
	}
	if frameworkID != "" {
		fi.ID = &mesos.FrameworkID{Value: frameworkID}
	}
	if c.Principal != "" {
		fi.Principal = ptr(c.Principal)
	}
	if c.WebUIURL != "" {
		fi.WebUiURL = ptr(c.WebUIURL)
	}
	if c.Hostname != "" {
		fi.Hostname = ptr(c.Hostname)
	}
	if len(c.Labels) > 0 {
		keys := make([]string, 0, len(c.Labels))
		for k := range c.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		fi.Labels = &mesos.Labels{}
		for _, k := range keys {
			fi.Labels.Labels = append(fi.Labels.Labels, mesos.Label{Key: k, Value: ptr(c.Labels[k])})
		}
	}
	seen := map[mesos.FrameworkInfo_Capability_Type]bool{}
	for _, t := range append([]mesos.FrameworkInfo_Capability_Type{mesos.FrameworkInfo_Capability_MULTI_ROLE}, c.Capabilities...) {
		if !seen[t] {
			seen[t] = true
			fi.Capabilities = append(fi.Capabilities, mesos.FrameworkInfo_Capability{Type: t})
		}
	}
	return fi
}

func ptr[T any](v T) *T { return &v }
