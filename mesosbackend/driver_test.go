package mesosbackend

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/internal/redact"
)

func TestMasterURL(t *testing.T) {
	for raw, want := range map[string]string{
		"mesos://127.0.0.1:5050":             "mesos://127.0.0.1:5050",
		"mesos://zk://h1:2181,h2:2181/mesos": "mesos://zk://h1:2181,h2:2181/mesos",
	} {
		m, err := backend.ParseMaster(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := MasterURL(m); got != want {
			t.Errorf("MasterURL(%q) = %q, want %q", raw, got, want)
		}
	}
}

func TestDriverHost(t *testing.T) {
	m, err := backend.ParseMaster("mesos://127.0.0.1:5050")
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
	sum := strings.Repeat("ab", 32)
	fs, exe, err := ServeExecutor("https://u:p@h/flint?sig=x", sum, Addr{Host: "127.0.0.1"}, log)
	if err != nil || exe.URI != "https://u:p@h/flint?sig=x" || exe.Log != "https://*****@h/flint?sig=*****" || exe.Name != "flint" || exe.SHA256 != sum {
		t.Errorf("configured: %+v %v", exe, err)
	}
	// the server still runs, for the files a job adds, but serves no binary
	if fs == nil || fs.URL() == "" {
		t.Fatalf("configured binary: no file server for added files")
	}
	if u := exe.URIs("e1", nil); u[0].Value != exe.URI {
		t.Errorf("configured binary's URI got a credential: %s", u[0].Value)
	}
	fs.Close(context.Background())
	fs, exe, err = ServeExecutor("", "", Addr{Host: "127.0.0.1"}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close(context.Background())
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(exe.URI, "?#") || exe.Log != exe.URI || exe.Name != filepath.Base(self) || len(exe.SHA256) != 64 {
		t.Errorf("served: %+v; want a URI with no credential, named after the executable, with its SHA-256", exe)
	}
	if got := exe.Env()[contract.EnvBinarySHA256]; got != exe.SHA256 {
		t.Errorf("Env %v: executors are not told the SHA-256", exe.Env())
	}
}

// Each launch of a served executor carries its own credential, which opens
// the binary until that executor registers and never another file; every
// URI names its file with output_file.
func TestExecutableURIsGrantPerExecutor(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	fs, exe, err := ServeExecutor("", "", Addr{Host: "127.0.0.1"}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close(context.Background())
	other, err := fs.AddFile(writeFile(t, "other.conf", "x"))
	if err != nil {
		t.Fatal(err)
	}
	u1 := exe.URIs("1", []string{"https://s3.example/b/data.tar.gz?X-Sig=abc#frag", "/opt/lib/x.so"})
	u2 := exe.URIs("2", nil)
	if len(u1) != 3 || len(u2) != 1 {
		t.Fatalf("URIs: %+v %+v", u1, u2)
	}
	for i, want := range []string{exe.Name, "data.tar.gz", "x.so"} {
		if got := u1[i].GetOutputFile(); got != want {
			t.Errorf("URI %d output_file %q, want %q", i, got, want)
		}
	}
	if !u1[0].GetExecutable() || u1[0].GetExtract() || u1[0].GetCache() || u1[1].Extract != nil {
		t.Errorf("flags: %+v, %+v", u1[0], u1[1])
	}
	tok1, tok2 := tokenOf(t, u1[0].Value), tokenOf(t, u2[0].Value)
	if tok1 == tok2 {
		t.Fatal("two executors share a fetch credential")
	}
	status := func(rawURL string) int {
		t.Helper()
		resp, err := http.Get(rawURL)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status(u1[0].Value); got != 200 {
		t.Fatalf("executor 1 fetching its binary: %d", got)
	}
	if got := status(other.URL + "?token=" + tok1); got != 401 {
		t.Fatalf("executor 1's credential on another file: %d, want 401", got)
	}
	exe.Registered("1")
	if got := status(u1[0].Value); got != 401 {
		t.Fatalf("executor 1's credential after it registered: %d, want 401", got)
	}
	if got := status(u2[0].Value); got != 200 {
		t.Fatalf("executor 2, not registered yet: %d", got)
	}
	if again := exe.URIs("2", nil); again[0].Value != u2[0].Value {
		t.Fatal("a second launch description of an unregistered executor differs (Mesos refuses a changed ExecutorInfo)")
	}
}

func tokenOf(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	tok := u.Query().Get("token")
	if len(tok) < 32 {
		t.Fatalf("%s carries no fetch credential", redact.URL(rawURL))
	}
	return tok
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A new framework's task ids stay plain; every driver that takes over a framework gets a prefix of its
// own, so that a successor never reuses the ids of its predecessor's tasks (which may still run).
func TestTaskIDPrefix(t *testing.T) {
	c := config.New()
	if p := TaskIDPrefix(c); p != "" {
		t.Errorf("a new framework's prefix is %q, want none", p)
	}
	if err := c.Set("flint.mesos.driver.frameworkId", "f-0001"); err != nil {
		t.Fatal(err)
	}
	first, second := TaskIDPrefix(c), TaskIDPrefix(c)
	for _, p := range []string{first, second} {
		if len(p) != 9 || !strings.HasSuffix(p, "-") {
			t.Errorf("a successor's prefix is %q, want 8 characters and a dash", p)
		}
	}
	if first == second {
		t.Errorf("two successors share the prefix %q", first)
	}
}

// A given tag replaces the random one, for a successor only: a simulation's
// ids are a function of its seed, and a new framework's stay plain.
func TestTaskIDPrefixTagged(t *testing.T) {
	c := config.New()
	if p := TaskIDPrefixTagged(c, "d1"); p != "" {
		t.Errorf("a new framework's tagged prefix is %q, want none", p)
	}
	if err := c.Set("flint.mesos.driver.frameworkId", "f-0001"); err != nil {
		t.Fatal(err)
	}
	if p := TaskIDPrefixTagged(c, "d1"); p != "d1-" {
		t.Errorf("a successor's prefix with tag d1 is %q, want d1-", p)
	}
	if p := TaskIDPrefixTagged(c, ""); len(p) != 9 || !strings.HasSuffix(p, "-") {
		t.Errorf("a successor's prefix with no tag is %q, want a random 8 characters and a dash", p)
	}
}

// An unresolvable master host name is blamed on the master, not on
// flint.driver.host (issue 23, item 9).
func TestUnresolvableMasterIsBlamedOnTheMaster(t *testing.T) {
	for raw, host := range map[string]string{
		"mesos://no-such-master.invalid:5050":        "no-such-master.invalid",
		"mesos://zk://no-such-zk.invalid:2181/mesos": "no-such-zk.invalid",
	} {
		m, err := backend.ParseMaster(raw)
		if err != nil {
			t.Fatal(err)
		}
		_, err = DriverHost("", m)
		if err == nil {
			t.Fatalf("%s: resolved", raw)
		}
		msg := err.Error()
		if !strings.Contains(msg, `"`+host+`" in flint.master`) || !strings.Contains(msg, "cannot be resolved") || strings.Contains(msg, "flint.driver.host") {
			t.Errorf("%s: error %q should blame the master's host %s, not flint.driver.host", raw, msg, host)
		}
	}
}
