package mesosbackend

import (
	"fmt"
	"net"
	"strings"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/config"
)

// Addr is where the driver's servers (the coarse executor gateway, the file
// server) listen and the host executors are told to reach them at. They
// differ behind NAT or in a bridge-networked container, as with Spark's
// spark.driver.bindAddress: the advertised ports must then be forwarded to
// the same port numbers, so fixed ports are configurable too.
type Addr struct {
	Host        string // flint.driver.host; Resolve fills it in when unset
	Bind        string // flint.driver.bindAddress; "" binds Host
	GatewayPort int    // flint.driver.port; 0: any free port
	FilePort    int    // flint.driver.fileServer.port; 0: any free port
}

// ReadAddr reads and validates the driver address keys.
func ReadAddr(cfg *config.Config) (Addr, []error) {
	a := Addr{
		Host:        strings.TrimSpace(cfg.String("flint.driver.host")),
		Bind:        strings.TrimSpace(cfg.String("flint.driver.bindAddress")),
		GatewayPort: cfg.Int("flint.driver.port"),
		FilePort:    cfg.Int("flint.driver.fileServer.port"),
	}
	var errs []error
	for key, p := range map[string]int{"flint.driver.port": a.GatewayPort, "flint.driver.fileServer.port": a.FilePort} {
		if p < 0 || p > 65535 {
			errs = append(errs, fmt.Errorf("%s=%d is not a TCP port (0 to 65535; 0 picks a free one)", key, p))
		}
	}
	if a.GatewayPort != 0 && a.GatewayPort == a.FilePort {
		errs = append(errs, fmt.Errorf("flint.driver.port and flint.driver.fileServer.port are both %d", a.GatewayPort))
	}
	return a, errs
}

// Resolve fills in Host, when unset, with the local address the driver uses
// to reach master m (see DriverHost).
func (a Addr) Resolve(m backend.Master) (Addr, error) {
	h, err := DriverHost(a.Host, m)
	a.Host = h
	return a, err
}

// Listen opens one of the driver's listeners on the bind address (Host when
// unset) at port; what names the server in errors.
func (a Addr) Listen(port int, what string) (net.Listener, error) {
	bind, key := a.Bind, "flint.driver.bindAddress"
	if bind == "" {
		bind, key = a.Host, "flint.driver.host"
	}
	lis, err := net.Listen("tcp", net.JoinHostPort(bind, fmt.Sprint(port)))
	if err != nil {
		return nil, fmt.Errorf("%s: listen on %s port %d (%s): %w", what, bind, port, key, err)
	}
	return lis, nil
}

// Advertised is host:port of lis as executors reach it: the advertised host
// with the listener's port.
func (a Addr) Advertised(lis net.Listener) string {
	return net.JoinHostPort(a.Host, fmt.Sprint(lis.Addr().(*net.TCPAddr).Port))
}
