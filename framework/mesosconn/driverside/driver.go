package driverside

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/framework/mesosconn/detector"
	"github.com/flint-mesos/flint/uri"
)

// MasterURL is the URL mesosconn dials for a Mesos flint.master.
func MasterURL(m framework.Master) string {
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
func DriverHost(configured string, m framework.Master) (string, error) {
	if configured != "" {
		return configured, nil
	}
	target := m.Address
	if m.ZooKeeper != "" {
		u, err := detector.ParseMaster(MasterURL(m))
		if err != nil {
			return "", err
		}
		target = u.ZKServers[0]
	}
	c, err := net.Dial("udp", target)
	if err != nil {
		return "", fmt.Errorf("cannot find a local address towards %s (set flint.driver.host): %w", target, err)
	}
	defer c.Close()
	h, _, err := net.SplitHostPort(c.LocalAddr().String())
	if err != nil {
		return "", fmt.Errorf("local address: %w", err)
	}
	return h, nil
}

// Executable is the executor binary agents fetch.
type Executable struct {
	URI string // with the file server token, if any: never logged
	Log string // URI as logged
}

// ServeExecutor is the executor binary: configured (flint.executor.uri) when
// set, else the driver's own executable, served by a new file server on
// addr's bind address and file server port, advertised at addr.Host, whose
// token is in URI but not in Log. The server is returned whenever it serves,
// also with an error, for the caller to close.
func ServeExecutor(configured string, addr Addr, log logrus.FieldLogger) (*uri.Server, Executable, error) {
	if configured != "" {
		return nil, Executable{URI: configured, Log: RedactURI(configured)}, nil
	}
	token := uri.NewToken()
	fs, err := uri.NewServer(uri.ServerConfig{Token: token, AdvertiseHost: addr.Host, Logger: log})
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
	fu, err := fs.AddExecutable()
	if err != nil {
		return fs, Executable{}, fmt.Errorf("serve the driver's executable: %w", err)
	}
	return fs, Executable{URI: WithToken(fu.URL, token), Log: fu.URL}, nil
}

// Subscription is how a backend subscribes to its master.
type Subscription struct {
	Master         string             // the master URL (MasterURL)
	NetworkTimeout time.Duration      // flint.network.timeout: Start waits min(it, 60s) unless Options set a timeout
	Logger         logrus.FieldLogger // the connection's logger
	Options        []mesosconn.Option // applied after the logger
}

// Subscribe builds the connection's configuration from the flint.* keys
// (mesosconn.ConfigFrom) and subscribes to the master with h. The user is
// the framework user (FrameworkInfo.user, default mesosconn.DefaultUser);
// it is returned also when the master cannot be reached.
func Subscribe(ctx context.Context, fc *config.Config, s Subscription, h mesosconn.Handler) (conn *mesosconn.Conn, user string, err error) {
	mc, err := mesosconn.ConfigFrom(fc, append([]mesosconn.Option{mesosconn.WithLogger(s.Logger)}, s.Options...)...)
	if err != nil {
		return nil, "", err
	}
	mc.Master = s.Master
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
