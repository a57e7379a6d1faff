package dispatcher

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/deploy/minimesos/minimesostest"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/uri/fileserver"
)

// A submission's flint.mesos.driver.labels label the Mesos task the
// dispatcher runs the driver in (Spark's MesosClusterScheduler puts
// spark.mesos.driver.labels on the driver's TaskInfo): the agent receives
// the task with the dispatcher's own label (the submission id) and then
// the submission's, escapes undone, in their order; the property still
// reaches the driver's command line, so the driver labels its framework too.
func TestDriverTaskCarriesDriverLabels(t *testing.T) {
	s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(1, nil))
	d := startDispatcher(t, "mesos://"+strings.TrimPrefix(s.URL, "http://"))
	const labels = `team:data,cost\:centre:42\,7`
	id, err := d.Submit(CreateRequest{Action: "CreateSubmissionRequest", AppResource: "http://files.invalid/prog",
		FlintProperties: map[string]string{"flint.mesos.driver.labels": labels, "flint.driver.memory": "256m"}})
	if err != nil {
		t.Fatal(err)
	}
	msg, err := s.Fakes[0].WaitFor(30*time.Second, func(m link.MasterMessage) bool { return m.RunTask != nil && m.RunTask.Task != nil })
	if err != nil {
		t.Fatal(err)
	}
	task := msg.RunTask.Task
	want := [][2]string{{"flint.dispatcher.submission", id}, {"team", "data"}, {"cost:centre", "42,7"}}
	got := task.GetLabels().GetLabels()
	if len(got) != len(want) {
		t.Fatalf("driver task %s labels %v; want %v", task.TaskID.Value, got, want)
	}
	for i, w := range want {
		if got[i].Key != w[0] || got[i].GetValue() != w[1] {
			t.Errorf("label %d is %s=%q; want %s=%q", i, got[i].Key, got[i].GetValue(), w[0], w[1])
		}
	}
	if args := strings.Join(task.GetCommand().GetArguments(), " "); !strings.Contains(args, "--conf flint.mesos.driver.labels="+labels) {
		t.Errorf("the driver's command line lacks its labels: %s", args)
	}
}

// A malformed label list is refused at submission with one error naming
// the key, its value and the faulty entry — for the driver's labels and
// for the task and network labels its backend would refuse at start —
// and the dispatcher's own label key is not the user's to set.
func TestSubmissionRefusesMalformedLabels(t *testing.T) {
	for _, c := range []struct{ key, value, want string }{
		{"flint.mesos.driver.labels", "team:data,rack", `flint.mesos.driver.labels="team:data,rack": label "rack" is not key:value`},
		{"flint.mesos.task.labels", "a:b:c", `flint.mesos.task.labels="a:b:c": label "a:b:c" is not key:value`},
		{"flint.mesos.network.labels", "x", `flint.mesos.network.labels="x": label "x" is not key:value`},
		{"flint.mesos.driver.labels", "flint.dispatcher.submission:other", `label flint.dispatcher.submission is the dispatcher's own`},
	} {
		req := CreateRequest{Action: "CreateSubmissionRequest", AppResource: "sha256:" + sha,
			FlintProperties: map[string]string{c.key: c.value, "flint.executor.memory": "512m"}}
		_, err := req.Validate(fakeSeal)
		if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s=%q: %v; want ErrBadRequest with %q", c.key, c.value, err, c.want)
			continue
		}
		if n := strings.Count(err.Error(), "\n") + 1; n != 1 {
			t.Errorf("%s=%q: %d errors, want one:\n%v", c.key, c.value, n, err)
		}
	}
	req := CreateRequest{Action: "CreateSubmissionRequest", AppResource: "sha256:" + sha,
		FlintProperties: map[string]string{"flint.mesos.driver.labels": `a:1,b\,c:2`}}
	s, err := req.Validate(fakeSeal)
	if err != nil || s.Properties["flint.mesos.driver.labels"] != `a:1,b\,c:2` {
		t.Fatalf("well-formed labels: %v, properties %v", err, s.Properties)
	}
}

// startDispatcher starts a Dispatcher subscribed to master, with a real
// store, binaries, sealer and file server.
func startDispatcher(t *testing.T, master string) *Dispatcher {
	t.Helper()
	dir := t.TempDir()
	st, _ := NewDirStore(filepath.Join(dir, "store"))
	bins, _ := NewBinaries(filepath.Join(dir, "binaries"))
	key, _ := LoadOrCreateKey(filepath.Join(dir, "secrets.key"))
	sealer, _ := NewSealer(key)
	files, err := fileserver.New(fileserver.Config{Token: fileserver.NewToken()})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := files.Serve(lis); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = files.Close(context.Background()) })
	noCapacity := func(context.Context, string) ([]AgentCapacity, error) { return nil, nil }
	d, err := New(Config{Mesos: mesosconn.Config{Master: master, User: "test", StartTimeout: 20 * time.Second},
		Store: st, Binaries: bins, Sealer: sealer, Files: files, Capacity: noCapacity})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop(context.Background()) })
	return d
}

// Over the REST API a malformed flint.mesos.driver.labels is a 400
// ErrorResponse whose one message names the key and the entry, and
// nothing is queued.
func TestRESTRefusesMalformedDriverLabels(t *testing.T) {
	d, srv, _ := newUnstarted(t)
	body := `{"action":"CreateSubmissionRequest","appResource":"http://files.invalid/prog",` +
		`"flintProperties":{"flint.mesos.driver.labels":"team:data,rack"},"clientFlintVersion":"dev"}`
	code, m, _ := call(t, "POST", srv.URL+"/v1/submissions/create", testToken, []byte(body))
	msg, _ := m["message"].(string)
	want := `flint.mesos.driver.labels="team:data,rack": label "rack" is not key:value`
	if code != 400 || m["action"] != "ErrorResponse" || !strings.Contains(msg, want) || strings.Count(msg, "flint.mesos.driver.labels") != 1 {
		t.Fatalf("create: %d %v; want 400 with one error containing %q", code, m, want)
	}
	if n := len(d.List()); n != 0 {
		t.Fatalf("%d submissions queued after a refused one", n)
	}
}
