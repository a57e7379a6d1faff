package driverside

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
)

func TestMasterURL(t *testing.T) {
	for raw, want := range map[string]string{
		"mesos://127.0.0.1:5050":             "mesos://127.0.0.1:5050",
		"mesos://zk://h1:2181,h2:2181/mesos": "mesos://zk://h1:2181,h2:2181/mesos",
	} {
		m, err := framework.ParseMaster(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := MasterURL(m); got != want {
			t.Errorf("MasterURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestDriverHost(t *testing.T) {
	m, err := framework.ParseMaster("mesos://127.0.0.1:5050")
	if err != nil {
		t.Fatal(err)
	}
	if h, err := DriverHost("10.0.0.7", m); err != nil || h != "10.0.0.7" {
		t.Errorf("configured: %q, %v", h, err)
	}
	if h, err := DriverHost("", m); err != nil || h != "127.0.0.1" {
		t.Errorf("towards 127.0.0.1:5050: %q, %v", h, err)
	}
}

func TestServeExecutor(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	fs, exe, err := ServeExecutor("https://u:p@h/flint?sig=x", Addr{Host: "127.0.0.1"}, log)
	if fs != nil || err != nil || exe.URI != "https://u:p@h/flint?sig=x" || exe.Log != "https://REDACTED@h/flint?REDACTED" {
		t.Errorf("configured: %v %+v %v", fs, exe, err)
	}
	fs, exe, err = ServeExecutor("", Addr{Host: "127.0.0.1"}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close(context.Background())
	if !strings.Contains(exe.URI, "?token=") || strings.Contains(exe.Log, "token") || RedactURI(exe.URI) != strings.Replace(exe.Log, "#", "?REDACTED#", 1) {
		t.Errorf("served: URI %q, Log %q", exe.URI, exe.Log)
	}
}
