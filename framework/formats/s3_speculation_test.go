package formats_test

import (
	"context"
	"errors"
	"iter"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// secondHost starts one more agent on c under another host name (speculative copies run on
// another host than the attempt they copy).
func secondHost(t *testing.T, c *cluster.Cluster, hostname string) {
	t.Helper()
	log, _ := mesostest.Logger(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	fetch, err := cluster.NewFetch(filepath.Join(dir, "fetch-cache"), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{WorkDir: dir, Hostname: hostname, Endpoint: lis.Addr().String(),
		Resources: "cpus:2;mem:1024;disk:1024;ports:[31000-31100]", Fetch: fetch,
		ShutdownGrace: time.Second, KillGrace: time.Second, Logger: log.WithField("agent", hostname)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: a.Handler()}
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(lis) }()
	client := link.Dial(c.URL(), link.ClientConfig{Logger: log})
	t.Cleanup(func() { _ = a.Close(); client.Close(); _ = srv.Close(); <-served })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Start(ctx, client); err != nil {
		t.Fatalf("agent %s: %v", hostname, err)
	}
}

type specSaveArgs struct {
	Out, Dir string // Dir holds "first" (made by partition 0's first attempt) and the FIFO "gate"
	N        int
}

// specSaveJob saves N lines in 4 partitions. Partition 0's first attempt writes its lines
// (its multipart upload open), then waits reading Dir/gate, so speculation launches a copy on
// the other host; the copy finds Dir/first and runs through, and wins.
var specSaveJob = dataset.Job("formats.test.s3speculated", func(b *dataset.Builder, a specSaveArgs) error {
	lines := dataset.MapPartitionsWithContext(dataset.Range(b, 0, int64(a.N), 4),
		func(tc dataset.TaskContext, records iter.Seq[int64], yield func(string)) error {
			for x := range records {
				yield(killedLine(x))
			}
			if tc.Partition() != 0 {
				return nil
			}
			f, err := os.OpenFile(filepath.Join(a.Dir, "first"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if errors.Is(err, os.ErrExist) {
				return nil // the speculative copy
			}
			if err != nil {
				return err
			}
			f.Close()
			_, err = os.ReadFile(filepath.Join(a.Dir, "gate"))
			return err
		})
	return dataset.SaveAsTextFile(lines, a.Out)
})

// taskZeroEnds closes two when task index 0 has ended twice (both attempts).
type taskZeroEnds struct {
	mu  sync.Mutex
	n   int
	two chan struct{}
}

func (e *taskZeroEnds) OnEvent(ev event.Event) {
	te, ok := ev.(event.TaskEnd)
	if !ok || te.Index != 0 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n++; e.n == 2 {
		close(e.two)
	}
}

// A speculative duplicate attempt: partition 0's copy wins and is published; the first
// attempt's multipart upload — open while it waits — is aborted by the driver's commit, so
// when it is released it cannot complete anything. The output holds exactly one copy of each
// partition and no multipart upload is left open (ListMultipartUploads).
func TestSpeculativeLoserUploadAbortedOnS3(t *testing.T) {
	fs := testFS(t, shared)
	c := mesostest.StartCluster(t, mesostest.Cluster{Agents: 1, Resources: "cpus:2;mem:1024;disk:1024;ports:[31000-31100]", ShutdownGrace: time.Second})
	secondHost(t, c, "spec-host-b")
	conf := append(threemode.Conf(threemode.Coarse), shared.Conf()...)
	conf = slices.DeleteFunc(conf, func(kv string) bool {
		return strings.HasPrefix(kv, "flint.master=") || strings.HasPrefix(kv, "flint.mesos.coarse=")
	})
	conf = append(conf, "flint.master=mesos://"+strings.TrimPrefix(c.URL(), "http://"), "flint.executor.cores=1",
		"flint.speculation=true", "flint.speculation.interval=20ms", "flint.speculation.quantile=0.5", "flint.speculation.minTaskRuntime=0s")
	cfg, err := config.Load(config.LoadOptions{Conf: conf})
	if err != nil {
		t.Fatal(err)
	}
	log, logs := mesostest.Logger(t)
	log.SetLevel(logrus.InfoLevel)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fc.Stop(context.Background()) })
	ends := &taskZeroEnds{two: make(chan struct{})}
	fc.AddListener(ends)
	if !waitfor.Poll(30*time.Second, func() bool { return fc.DefaultParallelism() >= 4 }) { // executors on both hosts
		t.Fatalf("4 executor cores on 2 hosts did not register:\n%s", logs.String())
	}
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	out := "s3://" + sharedBucket + "/speculated"
	const n = 4 * 1000
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	_, err = specSaveJob.Run(ctx, fc, specSaveArgs{Out: out, Dir: dir, N: n})
	// the copy won while the first attempt still waits at the gate, its upload open until
	// the commit aborted it
	if w, oerr := os.OpenFile(gate, os.O_WRONLY, 0); oerr == nil {
		w.Close()
	} else {
		t.Error(oerr)
	}
	if err != nil {
		t.Fatalf("%v\n%s", err, logs.String())
	}
	select {
	case <-ends.two:
	case <-ctx.Done():
		t.Fatal("partition 0's first attempt never ended")
	}
	files, err := fs.List(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var size, want int64
	for _, f := range files {
		names = append(names, strings.TrimPrefix(f.Path, out+"/"))
		size += f.Size
	}
	for x := range int64(n) {
		want += int64(len(killedLine(x))) + 1
	}
	slices.Sort(names)
	if want := []string{"_SUCCESS", "part-00000", "part-00001", "part-00002", "part-00003"}; !slices.Equal(names, want) {
		t.Fatalf("output holds %v, want %v", names, want)
	}
	if size != want {
		t.Fatalf("the parts hold %d bytes, want %d (each partition once)", size, want)
	}
	if ups, err := fs.Uploads(context.Background(), out); err != nil || len(ups) != 0 {
		t.Fatalf("uploads left open after the loser ended: %v (%v)", ups, err)
	}
}
