package mesosbackend

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/config"
)

func TestReadAddrValidates(t *testing.T) {
	cfg := func(conf ...string) []error {
		t.Helper()
		_, errs := ReadAddr(loadConfig(t, conf...))
		return errs
	}
	if errs := cfg(); len(errs) != 0 {
		t.Fatalf("defaults: %v", errs)
	}
	a, errs := ReadAddr(loadConfig(t, "flint.driver.host=10.0.0.5", "flint.driver.bindAddress=0.0.0.0", "flint.driver.port=7077", "flint.driver.fileServer.port=7078"))
	if len(errs) != 0 || a != (Addr{Host: "10.0.0.5", Bind: "0.0.0.0", GatewayPort: 7077, FilePort: 7078}) {
		t.Fatalf("ReadAddr = %+v, %v", a, errs)
	}
	// Out-of-range ports are refused when the configuration loads (the key
	// table bounds them); ReadAddr still refuses them in a Config built
	// otherwise, and refuses one port for both servers.
	for _, c := range []string{"flint.driver.port=70000", "flint.driver.fileServer.port=-1"} {
		if _, err := config.Load(config.LoadOptions{Conf: []string{c}}); err == nil || !strings.Contains(err.Error(), "flint.driver.") {
			t.Errorf("%s: load error %v, want one naming the key", c, err)
		}
	}
	if errs := cfg("flint.driver.port=7077", "flint.driver.fileServer.port=7077"); len(errs) != 1 || !strings.Contains(errs[0].Error(), "flint.driver.") {
		t.Errorf("one port for both: errors %v, want one naming the keys", errs)
	}
}

// freePort is a port nothing listens on (closed right away).
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// The driver listens on the bind address at the fixed port and advertises
// the configured host with that port.
func TestAddrBindsOneAddressAndAdvertisesAnother(t *testing.T) {
	port := freePort(t)
	a := Addr{Host: "driver.example", Bind: "127.0.0.1", FilePort: port}
	lis, err := a.Listen(a.FilePort, "file server")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	if got := lis.Addr().String(); got != "127.0.0.1:"+strconv.Itoa(port) {
		t.Fatalf("listening on %s, want 127.0.0.1:%d", got, port)
	}
	if got := a.Advertised(lis); got != "driver.example:"+strconv.Itoa(port) {
		t.Fatalf("advertised %s", got)
	}
	if _, err := a.Listen(port, "file server"); err == nil || !strings.Contains(err.Error(), "flint.driver.bindAddress") {
		t.Fatalf("second listen on the same port: %v, want an error naming flint.driver.bindAddress", err)
	}

	log := logrus.New()
	log.SetOutput(io.Discard)
	fs, exe, err := ServeExecutor("", "", Addr{Host: "driver.example", Bind: "127.0.0.1", FilePort: freePort(t)}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close(context.Background())
	if !strings.HasPrefix(exe.Log, "http://driver.example:") {
		t.Fatalf("executor URL %s does not advertise the configured host", exe.Log)
	}
}
