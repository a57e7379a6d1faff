package detector

import (
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/framework/mesosconn/detector/zktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func quietLogger() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

func TestParseMaster(t *testing.T) {
	tests := []struct {
		in   string
		want URL
	}{
		{"mesos://m1:5050", URL{Raw: "mesos://m1:5050", Addr: "m1:5050", Scheme: "http"}},
		{"http://127.0.0.1:5050/", URL{Raw: "http://127.0.0.1:5050/", Addr: "127.0.0.1:5050", Scheme: "http"}},
		{"https://m1:443", URL{Raw: "https://m1:443", Addr: "m1:443", Scheme: "https"}},
		{"mesos://zk://z1:2181,z2:2181/mesos", URL{Raw: "mesos://zk://z1:2181,z2:2181/mesos", Scheme: "http", ZKServers: []string{"z1:2181", "z2:2181"}, ZKPath: "/mesos"}},
		{"zk://u:p@z1:2181/a/b/", URL{Raw: "zk://u:p@z1:2181/a/b/", Scheme: "http", ZKServers: []string{"z1:2181"}, ZKPath: "/a/b", ZKAuth: "u:p"}},
	}
	for _, tt := range tests {
		got, err := ParseMaster(tt.in)
		if err != nil {
			t.Errorf("ParseMaster(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseMaster(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
	for _, bad := range []string{"", "m1:5050", "mesos://m1", "mesos://:5050", "mesos://m1:0", "mesos://m1:99999",
		"mesos://zk://z1:2181", "mesos://zk://z1:2181/", "mesos://zk://z1,z2:2181/mesos", "mesos://zk://user@z1:2181/m", "local[2]"} {
		_, err := ParseMaster(bad)
		if !errors.Is(err, ErrBadURL) || !strings.Contains(err.Error(), bad) {
			t.Errorf("ParseMaster(%q) = %v, want ErrBadURL naming the URL", bad, err)
		}
	}
}

func TestParseMasterInfo(t *testing.T) {
	l, err := ParseMasterInfo(zktest.MasterJSON("m-1", "master1", 5050))
	if err != nil {
		t.Fatal(err)
	}
	if l.Addr != "master1:5050" || l.ID != "m-1" || l.Info.GetVersion() != "1.11.0" || l.Info.GetAddress().GetIP() != "127.0.0.1" {
		t.Errorf("got %+v", l)
	}
	// Legacy fields only: hostname missing, ip in network byte order.
	l, err = ParseMasterInfo([]byte(`{"id":"m-2","ip":16777343,"port":5051}`))
	if err != nil || l.Addr != "127.0.0.1:5051" {
		t.Errorf("legacy = %+v, %v; want 127.0.0.1:5051", l, err)
	}
	// address.ip is used when address.hostname is missing.
	l, err = ParseMasterInfo([]byte(`{"id":"m-3","hostname":"old","port":1,"address":{"ip":"10.0.0.7","port":5052}}`))
	if err != nil || l.Addr != "10.0.0.7:5052" {
		t.Errorf("address.ip = %+v, %v; want 10.0.0.7:5052", l, err)
	}
	for _, bad := range []string{`{`, `{"id":"x"}`, `{"id":"x","hostname":"h"}`} {
		if _, err := ParseMasterInfo([]byte(bad)); err == nil {
			t.Errorf("ParseMasterInfo(%s) succeeded", bad)
		}
	}
}

func TestLowest(t *testing.T) {
	got := lowest([]string{"log_replicas", "json.info_0000000012", "info_0000000001", "json.info_0000000003", "json.info_x"})
	if got != "json.info_0000000003" {
		t.Errorf("lowest = %q", got)
	}
	if lowest([]string{"info_1"}) != "" {
		t.Error("non-JSON contenders must be ignored")
	}
}

func TestStatic(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := New(URL{Addr: "m1:5050"}, nil).Watch(ctx)
	l := <-ch
	if l.Addr != "m1:5050" || l.Info.GetHostname() != "m1" || l.Info.GetPort() != 5050 {
		t.Errorf("static leader = %+v", l)
	}
	cancel()
	if _, ok := <-ch; ok {
		t.Error("channel not closed after cancel")
	}
}

// next waits for the next leader report.
func next(t *testing.T, ch <-chan Leader) Leader {
	t.Helper()
	select {
	case l, ok := <-ch:
		if !ok {
			t.Fatal("detector channel closed")
		}
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("no leader report within 30s")
	}
	return Leader{}
}

func TestZooKeeperLeaderChanges(t *testing.T) {
	addr := zktest.Start(t)
	client := zktest.Client(t, addr)
	acl := zk.WorldACL(zk.PermAll)

	d := NewZK([]string{addr}, "/mesos", quietLogger())
	d.RetryInterval = 50 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := d.Watch(ctx)

	// No path yet: no leader.
	if l := next(t, ch); !l.IsZero() {
		t.Fatalf("leader before election = %+v", l)
	}
	if _, err := client.Create("/mesos", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	seq := int32(zk.FlagEphemeral | zk.FlagSequence)
	first, err := client.Create("/mesos/json.info_", zktest.MasterJSON("master-1", "127.0.0.1", 5050), seq, acl)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Create("/mesos/log_replicas", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Create("/mesos/json.info_", zktest.MasterJSON("master-2", "localhost", 5051), seq, acl); err != nil {
		t.Fatal(err)
	}
	l := next(t, ch)
	if l.ID != "master-1" || l.Addr != "127.0.0.1:5050" {
		t.Fatalf("leader = %+v, want master-1 at 127.0.0.1:5050", l)
	}
	// The leader's node goes away: the next contender leads.
	if err := client.Delete(first, -1); err != nil {
		t.Fatal(err)
	}
	l = next(t, ch)
	if l.ID != "master-2" || l.Addr != "localhost:5051" {
		t.Fatalf("leader after failover = %+v, want master-2 at localhost:5051", l)
	}
	cancel()
	for range ch {
	}
}
