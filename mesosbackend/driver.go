package mesosbackend

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/mesosconn/detector"
	"github.com/flint-mesos/flint/framework/mesoslabel"
	"github.com/flint-mesos/flint/internal/localip"
	"github.com/flint-mesos/flint/internal/redact"
	"github.com/flint-mesos/flint/internal/uuid"
	"github.com/flint-mesos/flint/uri/fileserver"
)

// MasterURL is the URL mesosconn dials for a Mesos flint.master.
func MasterURL(m backend.Master) string {
	switch {
	case m.ZooKeeper != "":
		return "mesos://zk://" + strings.TrimPrefix(m.ZooKeeper, "zk://")
	case strings.HasPrefix(m.Raw, "mesos://"):
		return m.Raw
	}
	return "mesos://" + m.Address
}

// DriverHost is the address executors reach the driver at: configured
// (flint.driver.host) when set, else the local address used to reach the
// master (its first ZooKeeper server for a zk:// master).
func DriverHost(configured string, m backend.Master) (string, error) {
	if configured != "" {
		return configured, nil
	}
	target, what := m.Address, "the Mesos master's host"
	if m.ZooKeeper != "" {
		u, err := detector.ParseMaster(MasterURL(m))
		if err != nil {
			return "", err
		}
		target, what = u.ZKServers[0], "the ZooKeeper server"
	}
	h, err := localip.Towards(target)
	var dns *net.DNSError
	if errors.As(err, &dns) {
		// the master's name is wrong, not the driver's address
		host, _, serr := net.SplitHostPort(target)
		if serr != nil {
			host = target
		}
		return "", fmt.Errorf("%s %q in flint.master %s cannot be resolved (check the master's host name): %w",
			what, host, redact.URL(MasterURL(m)), err)
	}
	if err != nil {
		return "", fmt.Errorf("cannot find a local address towards %s (set flint.driver.host): %w", target, err)
	}
	return h, nil
}

// ServeExecutor starts the driver's file server on addr's bind address and
// file server port, advertised at addr.Host: it serves the files a job adds
// (Context.AddFile, see AddedFiles) and the executor binary. The binary is
// the configured one (flint.executor.uri, with sha256 from
// flint.executor.sha256, possibly empty) when set, else the driver's own
// executable, published on the server, whose executors check their binary
// against its SHA-256. The server is returned whenever it serves, also with
// an error, for the caller to close.
func ServeExecutor(configured, sha256 string, addr Addr, log logrus.FieldLogger) (*fileserver.Server, Executable, error) {
	fs, err := fileserver.New(fileserver.Config{Token: fileserver.NewToken(), AdvertiseHost: addr.Host, Logger: log})
	if err != nil {
		return nil, Executable{}, fmt.Errorf("file server: %w", err)
	}
	lis, err := addr.Listen(addr.FilePort, "file server")
	if err != nil {
		return nil, Executable{}, err
	}
	if err := fs.Serve(lis); err != nil {
		return nil, Executable{}, fmt.Errorf("file server: %w", err)
	}
	if configured != "" {
		return fs, Executable{URI: configured, Name: URIBase(configured), Log: redact.URL(configured), SHA256: sha256, log: log}, nil
	}
	fu, err := fs.AddExecutable()
	if err != nil {
		return fs, Executable{}, fmt.Errorf("serve the driver's executable: %w", err)
	}
	return fs, Executable{URI: fu.URL, Name: fu.Name, Log: fu.URL, SHA256: fu.SHA256, files: fs, served: fu, log: log}, nil
}

// Subscription is how a backend subscribes to its master.
type Subscription struct {
	Master         string             // the master URL (MasterURL)
	NetworkTimeout time.Duration      // flint.network.timeout: Start waits min(it, 60s) unless Options set a timeout
	Logger         logrus.FieldLogger // the connection's logger
	Options        []mesosconn.Option // applied after the logger
	Metrics        mesosconn.Metrics  // the driver's connection counters (backend.Params.Metrics); nil: none
}

// Subscribe builds the connection's configuration from the flint.* keys
// (mesosconn.ConfigFrom) and subscribes to the master with h. The user is
// the framework user (FrameworkInfo.user, default mesosconn.DefaultUser);
// it is returned also when the master cannot be reached.
func Subscribe(ctx context.Context, fc *config.Config, s Subscription, h mesosconn.Handler) (conn *mesosconn.Conn, user string, err error) {
	mc, err := mesosconn.ConfigFrom(fc, append([]mesosconn.Option{mesosconn.WithLogger(s.Logger), mesosconn.WithMetrics(s.Metrics)}, s.Options...)...)
	if err != nil {
		return nil, "", err
	}
	mc.Master = s.Master
	if err := driverLabels(fc, &mc); err != nil {
		return nil, "", err
	}
	if mc.StartTimeout == 0 {
		mc.StartTimeout = min(s.NetworkTimeout, 60*time.Second)
	}
	if mc.User == "" {
		mc.User = mesosconn.DefaultUser()
	}
	conn, err = mesosconn.Start(ctx, mc, h)
	if err != nil {
		return nil, mc.User, fmt.Errorf("cannot register with the Mesos master %s: %w", s.Master, err)
	}
	return conn, mc.User, nil
}

// driverLabels puts flint.mesos.driver.labels into FrameworkInfo.labels
// (after the ones the connection's options gave; the key wins). Spark
// reads the key only in cluster mode, for the driver's task (the
// dispatcher does the same: deploy/dispatcher); a client-mode driver has
// no task, so Flint labels what it has, its framework, in both modes.
func driverLabels(fc *config.Config, mc *mesosconn.Config) error {
	labels, err := mesoslabel.Parse(fc.String("flint.mesos.driver.labels"))
	if err != nil {
		return fmt.Errorf("flint.mesos.driver.labels: %w", err)
	}
	if len(labels) > 0 && mc.Labels == nil {
		mc.Labels = map[string]string{}
	}
	for _, l := range labels {
		mc.Labels[l.Key] = l.GetValue()
	}
	return nil
}

// KeepFramework reports whether Stop leaves the framework registered for a successor driver
// (no TEARDOWN): flint.mesos.driver.failover with a flint.mesos.failoverTimeout above 0.
func KeepFramework(fc *config.Config) bool {
	return fc.Bool("flint.mesos.driver.failover") && fc.Duration("flint.mesos.failoverTimeout") > 0
}

// TaskIDPrefix starts the Mesos task (and executor) ids a driver launches. Mesos refuses a task whose
// id a live task of the framework already has ("Task has duplicate ID"), and a driver taking over
// a framework (flint.mesos.driver.frameworkId) finds its predecessor's tasks still running under
// ids it would reuse: such a driver prefixes its ids with a random tag of its own, so that neither
// its launches nor its kills of the predecessor's executors meet the other's ids. A new framework
// has no predecessor: its ids stay unprefixed ("" here).
func TaskIDPrefix(fc *config.Config) string { return TaskIDPrefixTagged(fc, "") }

// TaskIDPrefixTagged is TaskIDPrefix with the tag given instead of drawn at random ("": random):
// a simulation's run must be a function of its seed (the backends' WithIDTag).
func TaskIDPrefixTagged(fc *config.Config, tag string) string {
	if strings.TrimSpace(fc.String("flint.mesos.driver.frameworkId")) == "" {
		return ""
	}
	if tag == "" {
		tag = uuid.NewString()[:8]
	}
	return tag + "-"
}
