package master

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/internal/uuid"
)

// Defaults, as real Mesos.
const (
	DefaultHeartbeatInterval   = 15 * time.Second
	DefaultAllocationInterval  = time.Second
	DefaultAgentPingInterval   = 15 * time.Second
	DefaultAgentMaxMissedPings = 5
	// Version is the Mesos version minimesos reports.
	Version = "1.11.0"
	// Realm is the HTTP Basic realm of the scheduler API.
	Realm = "mesos-master-scheduler"
)

// ErrInvalidConfig is returned by New for an unusable Config.
var ErrInvalidConfig = errors.New("master: invalid config")

// Config configures a Master. Zero values take Mesos' defaults.
type Config struct {
	// ID is the master id; framework, offer and agent ids derive from it.
	// Empty: a fresh UUID.
	ID string
	// Hostname and Port are reported in MasterInfo (default localhost:5050).
	Hostname string
	Port     uint32
	// IP is the master's IPv4 address, reported in MasterInfo (ip and
	// address.ip) and in its pid master@IP:Port, as Mesos reports the
	// address it is bound to or advertises. Default: Hostname when it is
	// an IPv4 address, else 127.0.0.1. (cluster.Start chooses it from the
	// listener and the host name.)
	IP net.IP
	// HeartbeatInterval between HEARTBEAT events (15s).
	HeartbeatInterval time.Duration
	// AllocationInterval between batch allocations (1s).
	AllocationInterval time.Duration
	// AllocateOnRelease also allocates an agent's resources as soon as
	// they are recovered (low latency; not what Mesos does).
	AllocateOnRelease bool
	// OfferTimeout rescinds offers not answered in time (0 = never).
	OfferTimeout time.Duration
	// MaxOutstandingOffers caps unanswered offers per framework (0 = none).
	MaxOutstandingOffers int
	// Weights are role weights for DRF (default 1).
	Weights map[string]float64
	// AgentPingInterval and AgentMaxMissedPings: an agent that answers
	// none of AgentMaxMissedPings consecutive pings is removed (15s × 5).
	AgentPingInterval   time.Duration
	AgentMaxMissedPings int
	// AgentReregisterTimeout is how long after the master starts (or is
	// elected, see Master.Elected) an agent
	// it does not know may still be re-registering (after a master
	// restart): explicit reconciliation of its tasks gets no answer until
	// then, as Mesos answers for agents of its registry that have not
	// re-registered yet (--agent_reregister_timeout). minimesos keeps no
	// registry, so every unknown agent counts while the window lasts.
	// Default: AgentPingInterval × AgentMaxMissedPings.
	AgentReregisterTimeout time.Duration
	// RecoveryTime is how long the master recovers its registry once it
	// leads (from New, or from Elected): meanwhile it answers every
	// scheduler call 503 "Master has not finished recovery", as a Mesos
	// master does until it has read back its replicated registry
	// (src/master/http.cpp; the read is bounded by --registry_fetch_timeout).
	// minimesos keeps no registry, so this only reproduces the wait.
	// 0 (the default): none.
	RecoveryTime time.Duration
	// Credentials maps principals to secrets; nil disables authentication.
	Credentials map[string]string
	// ACLs authorizes which principal may run tasks as which user (Mesos'
	// run_tasks ACL, --acls); nil permits every user, as Mesos without ACLs.
	ACLs *ACLs
	// MaxCompletedFrameworks and MaxCompletedTasks bound the history kept
	// for /state (50 and 1000 like Mesos).
	MaxCompletedFrameworks int
	MaxCompletedTasks      int
	// Logger (default: logrus' standard logger).
	Logger logrus.FieldLogger
	// Clock (default: the real clock).
	Clock Clock
	// Seed of the allocator's random order (0: derived from the clock).
	Seed uint64
}

func (c *Config) setDefaults() error {
	if c.ID == "" {
		c.ID = uuid.NewString()
	}
	c.Hostname = cmp.Or(c.Hostname, "localhost")
	if c.Port == 0 {
		c.Port = 5050
	}
	if c.IP == nil {
		if c.IP = net.ParseIP(c.Hostname).To4(); c.IP == nil {
			c.IP = net.IPv4(127, 0, 0, 1)
		}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.HeartbeatInterval, DefaultHeartbeatInterval)
	def(&c.AllocationInterval, DefaultAllocationInterval)
	def(&c.AgentPingInterval, DefaultAgentPingInterval)
	if c.AgentMaxMissedPings == 0 {
		c.AgentMaxMissedPings = DefaultAgentMaxMissedPings
	}
	def(&c.AgentReregisterTimeout, c.AgentPingInterval*time.Duration(max(c.AgentMaxMissedPings, 1)))
	if c.MaxCompletedFrameworks == 0 {
		c.MaxCompletedFrameworks = 50
	}
	if c.MaxCompletedTasks == 0 {
		c.MaxCompletedTasks = 1000
	}
	if c.Logger == nil {
		c.Logger = logrus.StandardLogger()
	}
	if c.Clock == nil {
		c.Clock = RealClock{}
	}
	if c.Seed == 0 {
		c.Seed = uint64(c.Clock.Now().UnixNano())
	}
	var errs []error
	if c.HeartbeatInterval < 0 || c.AllocationInterval < 0 || c.AgentPingInterval < 0 || c.OfferTimeout < 0 || c.AgentReregisterTimeout < 0 || c.RecoveryTime < 0 {
		errs = append(errs, errors.New("negative interval"))
	}
	if c.AgentMaxMissedPings < 0 || c.MaxOutstandingOffers < 0 {
		errs = append(errs, errors.New("negative count"))
	}
	if c.IP.To4() == nil {
		errs = append(errs, fmt.Errorf("IP %v is not an IPv4 address (MasterInfo.ip holds one)", c.IP))
	} else {
		c.IP = c.IP.To4()
	}
	if strings.ContainsAny(c.ID, "/ \n") {
		errs = append(errs, fmt.Errorf("master id %q contains '/' or spaces", c.ID))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return nil
}

// LoadCredentials reads a Mesos --credentials file: either JSON
// {"credentials":[{"principal":"p","secret":"s"}]} or one "principal
// secret" pair per line (blank lines and lines starting with # ignored).
func LoadCredentials(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("master: credentials: %w", err)
	}
	return ParseCredentials(b)
}

// ParseCredentials parses the contents of a credentials file (see LoadCredentials).
func ParseCredentials(b []byte) (map[string]string, error) {
	out := map[string]string{}
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		var doc struct {
			Credentials []struct {
				Principal string `json:"principal"`
				Secret    string `json:"secret"`
			} `json:"credentials"`
		}
		if err := json.Unmarshal(t, &doc); err != nil {
			return nil, fmt.Errorf("master: credentials: %w", err)
		}
		for i, c := range doc.Credentials {
			if c.Principal == "" {
				return nil, fmt.Errorf("master: credentials: entry %d has no principal", i)
			}
			out[c.Principal] = c.Secret
		}
		return out, nil
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("master: credentials: line %d: want \"principal secret\"", n)
		}
		out[f[0]] = f[1]
	}
	return out, sc.Err()
}
