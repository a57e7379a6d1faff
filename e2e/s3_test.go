package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dc "github.com/ory/dockertest/v3/docker"
	"github.com/parquet-go/parquet-go"

	"github.com/flint-mesos/flint/examples/events"
	s3fs "github.com/flint-mesos/flint/framework/storage/s3"
	"github.com/flint-mesos/flint/internal/testkit/s3server"
)

const (
	s3Port   = "7070"
	s3Bucket = "flint" // created by the image (rootfs/data/flint)
	// secretsDir holds the driver's key files (flint.s3.accessKey.file, …), copied into
	// its container before it starts: the keys are in no command line or environment.
	secretsDir = "/secrets"
)

// TestFormatsOnS3AcrossHosts runs the events example (read events, total them per user and
// kind, write the totals) in driver containers against a master, two agents and a versitygw
// S3 server, each in its own container on the suite's network: it reads the events from
// s3:// as CSV, JSON lines and Parquet and writes the totals back as each, in coarse and fine
// mode. The totals read back from the server (from the host, through the published port)
// must equal those computed here without Flint, each output must end with _SUCCESS and no
// multipart upload may be left open. The keys reach the driver as files and the executors as
// Mesos secrets: neither key may be in any container's log, command line or environment
// (but the S3 server's own), in the master's or agents' /state, or in any file under the
// agents' work directory (sandboxes, fetched files).
func TestFormatsOnS3AcrossHosts(t *testing.T) {
	start := time.Now()
	c := newCluster(t, 2)
	s3 := c.startS3()
	t.Logf("cluster and S3 server up after %v", time.Since(start).Round(time.Millisecond))
	fs := c.hostS3(s3)

	evs, malformed, want := makeEvents()
	put := func(key string, b []byte) {
		w, err := fs.Create(context.Background(), "s3://"+s3Bucket+"/"+key)
		if err == nil {
			_, err = w.Write(b)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			t.Fatalf("upload %s: %v", key, err)
		}
	}
	put("in/events.csv", eventsCSV(evs, malformed))
	put("in/events.json", eventsJSON(evs, malformed))
	put("in/events.parquet", eventsParquet(t, evs))

	for _, run := range []struct {
		format  string
		coarse  bool
		dropped int
	}{
		{"csv", true, len(malformed)},
		{"json", false, len(malformed)},
		{"parquet", true, 0},
	} {
		out := "s3://" + s3Bucket + "/out/" + run.format
		args := []string{
			"--conf", "flint.s3.endpoint=http://s3:" + s3Port,
			"--conf", "flint.s3.region=" + s3server.Region,
			"--conf", "flint.s3.pathStyleAccess=true",
			"--conf", "flint.s3.accessKey.file=" + secretsDir + "/access-key",
			"--conf", "flint.s3.secretKey.file=" + secretsDir + "/secret-key",
			"--conf", "flint.files.maxPartitionBytes=16384", // several splits per input file
			"--conf", "flint.mesos.coarse=" + strconv.FormatBool(run.coarse),
			"--example", "events", "--",
			"--input", "s3://" + s3Bucket + "/in/events." + run.format, "--input-format", run.format,
			"--output", out, "--output-format", run.format, "--partitions", "3",
		}
		d := c.submitWithFiles("driver-"+run.format, map[string]string{
			secretsDir + "/access-key": s3server.AccessKey,
			secretsDir + "/secret-key": s3server.SecretKey,
		}, args...)
		code, stdout, _ := d.wait(driverTimeout)
		if code != 0 {
			t.Fatalf("events %s on s3 exited with status %d, want 0; stdout:\n%s", run.format, code, stdout)
		}
		line := fmt.Sprintf("%d events (%d malformed lines dropped): %d totals per user and kind written to %s",
			len(evs), run.dropped, len(want), out)
		if !strings.Contains(stdout, line) {
			t.Fatalf("events %s: stdout does not say %q:\n%s", run.format, line, stdout)
		}
		got := readTotals(t, fs, out, run.format)
		if !slices.Equal(got, want) {
			t.Fatalf("events %s: read back %d totals, want %d computed without Flint (first got %+v, want %+v)",
				run.format, len(got), len(want), first(got), first(want))
		}
		if ups, err := fs.Uploads(context.Background(), out); err != nil || len(ups) != 0 {
			t.Fatalf("events %s: multipart uploads left open under %s: %v (%v)", run.format, out, ups, err)
		}
		t.Logf("events %s (coarse=%v): %d totals from %d events, %d malformed dropped", run.format, run.coarse, len(got), len(evs), run.dropped)
	}
	for _, a := range c.agents {
		c.waitNoExecutors(a)
	}
	t.Logf("three jobs done after %v", time.Since(start).Round(time.Millisecond))
	c.checkNoKeys(s3, s3server.AccessKey, s3server.SecretKey)
	t.Logf("secret scan done after %v", time.Since(start).Round(time.Millisecond))
}

// makeEvents is 4000 seeded events, the malformed lines added to the text inputs, and the
// totals per user and kind computed from the events with a map, sorted.
func makeEvents() (evs []events.Event, malformed []string, want []events.Total) {
	r := rand.New(rand.NewPCG(25, 1))
	type k struct{ user, kind string }
	byKey := map[k]events.Total{}
	for range 4000 {
		e := events.Event{User: fmt.Sprintf("u%d", r.IntN(40)), Kind: []string{"click", "view", "buy"}[r.IntN(3)],
			Amount: float64(r.IntN(4000)) / 8}
		evs = append(evs, e)
		t := byKey[k{e.User, e.Kind}]
		t.User, t.Kind, t.Events, t.Amount = e.User, e.Kind, t.Events+1, t.Amount+e.Amount
		byKey[k{e.User, e.Kind}] = t
	}
	for _, v := range byKey {
		want = append(want, v)
	}
	slices.SortFunc(want, byUserKind)
	return evs, []string{"broken", "also broken"}, want
}

func byUserKind(a, b events.Total) int {
	return strings.Compare(a.User+"/"+a.Kind, b.User+"/"+b.Kind)
}

func first(ts []events.Total) events.Total {
	if len(ts) == 0 {
		return events.Total{}
	}
	return ts[0]
}

// eventsCSV is the events with a header; each malformed text is a row of one field (the
// header has three) among them.
func eventsCSV(evs []events.Event, malformed []string) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write([]string{"user", "kind", "amount"})
	for i, e := range evs {
		if i%1000 == 500 && len(malformed) > 0 {
			w.Write([]string{malformed[0]})
			malformed = malformed[1:]
		}
		w.Write([]string{e.User, e.Kind, strconv.FormatFloat(e.Amount, 'g', -1, 64)})
	}
	w.Flush()
	return b.Bytes()
}

// eventsJSON is the events as JSON lines, with the malformed texts as lines among them.
func eventsJSON(evs []events.Event, malformed []string) []byte {
	var b bytes.Buffer
	for i, e := range evs {
		if i%1000 == 500 && len(malformed) > 0 {
			b.WriteString(malformed[0] + "\n")
			malformed = malformed[1:]
		}
		j, _ := json.Marshal(e)
		b.Write(append(j, '\n'))
	}
	return b.Bytes()
}

// eventsParquet is the events in one Parquet file of several row groups, written by
// parquet-go.
func eventsParquet(t *testing.T, evs []events.Event) []byte {
	var b bytes.Buffer
	w := parquet.NewGenericWriter[events.Event](&b, parquet.MaxRowsPerRowGroup(500))
	if _, err := w.Write(evs); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// readTotals reads the part files under out, in format, from the host (without Flint),
// sorted; out's last object must be _SUCCESS.
func readTotals(t *testing.T, fs *s3fs.FS, out, format string) []events.Total {
	t.Helper()
	ctx := context.Background()
	files, err := fs.List(ctx, out)
	if err != nil {
		t.Fatalf("list %s: %v", out, err)
	}
	var got []events.Total
	var parts, success int
	for _, f := range files {
		base := f.Path[strings.LastIndexByte(f.Path, '/')+1:]
		if base == "_SUCCESS" {
			success++
			continue
		}
		if !strings.HasPrefix(base, "part-") {
			t.Fatalf("%s holds %s: neither a part file nor _SUCCESS", out, f.Path)
		}
		parts++
		rc, err := fs.Open(ctx, f, 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("read %s: %v", f.Path, err)
		}
		got = append(got, decodeTotals(t, f.Path, format, b)...)
	}
	if success != 1 || parts != 3 {
		t.Fatalf("%s holds %d part files and %d _SUCCESS, want 3 and 1: %v", out, parts, success, files)
	}
	slices.SortFunc(got, byUserKind)
	return got
}

func decodeTotals(t *testing.T, name, format string, b []byte) []events.Total {
	t.Helper()
	var out []events.Total
	switch format {
	case "parquet":
		rows, err := parquet.Read[events.Total](bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return rows
	case "json":
		for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			if l == "" {
				continue
			}
			var v events.Total
			if err := json.Unmarshal([]byte(l), &v); err != nil {
				t.Fatalf("%s: %q: %v", name, l, err)
			}
			out = append(out, v)
		}
	case "csv":
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(recs) == 0 || !slices.Equal(recs[0], []string{"user", "kind", "events", "amount"}) {
			t.Fatalf("%s: header %v, want user,kind,events,amount", name, recs)
		}
		for _, r := range recs[1:] {
			n, err1 := strconv.ParseInt(r[2], 10, 64)
			a, err2 := strconv.ParseFloat(r[3], 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("%s: row %v: %v %v", name, r, err1, err2)
			}
			out = append(out, events.Total{User: r[0], Kind: r[1], Events: n, Amount: a})
		}
	}
	return out
}

// startS3 builds the versitygw image (removed when the test ends) and starts it on the
// cluster's network as host s3, its port published on 127.0.0.1 for the test's own client.
func (c *cluster) startS3() *node {
	c.t.Helper()
	image := c.buildS3Image()
	cmd := []string{"--access", s3server.AccessKey, "--secret", s3server.SecretKey, "--region", s3server.Region,
		"--port", ":" + s3Port, "--quiet", "posix", "--sidecar", "/sidecar", "/data"}
	n := c.startImage(image, "s3", s3Port, nil, cmd...)
	addr := strings.TrimPrefix(n.hostURL, "http://")
	c.waitFor(30*time.Second, "the S3 server to listen on "+addr, func() (bool, string) {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false, err.Error()
		}
		conn.Close()
		return true, ""
	})
	return n
}

// hostS3 is a client of the S3 server from the host, through its published port.
func (c *cluster) hostS3(n *node) *s3fs.FS {
	c.t.Helper()
	fs, err := s3fs.New(context.Background(), s3fs.Options{Endpoint: n.hostURL, Region: s3server.Region, PathStyle: true,
		AccessKey: s3server.AccessKey, SecretKey: s3server.SecretKey})
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(fs.CloseIdleConnections)
	return fs
}

// buildS3Image builds deploy/versitygw's image around the static binary `make versitygw`
// builds (s3server.Binary: bin/versitygw or $FLINT_VERSITYGW); the test removes it at its end.
func (c *cluster) buildS3Image() string {
	c.t.Helper()
	bin, err := s3server.Binary()
	if err != nil {
		c.t.Fatal(err)
	}
	if err := checkStatic(bin); err != nil {
		c.t.Fatalf("the S3 server's image needs a static versitygw (build it with `%s`): %v", s3server.BuildCommand, err)
	}
	dir := c.t.TempDir()
	root, err := filepath.Abs("..")
	if err != nil {
		c.t.Fatal(err)
	}
	df, err := os.ReadFile(filepath.Join(root, "deploy", "versitygw", "Dockerfile"))
	if err != nil {
		c.t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			c.t.Helper()
			c.t.Fatalf("the S3 server's image context: %v", err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "Dockerfile"), df, 0o644))
	for _, d := range []string{"rootfs/data/" + s3Bucket, "rootfs/sidecar", "rootfs/tmp"} {
		must(os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	must(os.Chmod(filepath.Join(dir, "rootfs/tmp"), 0o1777))
	// A hard link when the temporary directory is on bin/'s file system (no 60 MB copy).
	if err := os.Link(bin, filepath.Join(dir, "versitygw")); err != nil {
		b, err := os.ReadFile(bin)
		must(err)
		must(os.WriteFile(filepath.Join(dir, "versitygw"), b, 0o755))
	}
	image := "flint-e2e-versitygw:" + runID
	var out bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err = c.pool.Client.BuildImage(dc.BuildImageOptions{
		Name: image, ContextDir: dir, Dockerfile: "Dockerfile", OutputStream: &out,
		RmTmpContainer: true, ForceRmTmpContainer: true, Labels: map[string]string{"flint-e2e": runID}, Context: ctx,
	})
	if err != nil {
		c.t.Fatalf("docker build of %s (FROM scratch, no registry needed): %v\n%s", image, err, out.String())
	}
	c.t.Cleanup(func() {
		if err := c.pool.Client.RemoveImageExtended(image, dc.RemoveImageOptions{Force: true}); err != nil {
			c.t.Logf("removing image %s: %v", image, err)
		}
	})
	return image
}

// checkStatic fails for a binary that needs a dynamic loader (a scratch image has none).
func checkStatic(bin string) error {
	f, err := elf.Open(bin)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked", bin)
		}
	}
	return nil
}

// submitWithFiles is submit with files (path → content, mode 0600) copied into the driver's
// container before it starts.
func (c *cluster) submitWithFiles(name string, files map[string]string, args ...string) *driver {
	c.t.Helper()
	args = append([]string{"submit", "--master", "mesos://master:" + masterPort, "--log-level", "debug"}, args...)
	return &driver{c: c, n: c.startImage(c.image, name, "", files, args...)}
}

// startImage is start with another image and files copied in before the container starts.
func (c *cluster) startImage(image, name, port string, files map[string]string, args ...string) *node {
	c.t.Helper()
	n := &node{name: name, port: port, cname: fmt.Sprintf("flint-e2e-%s-%s-%s", runID, sanitize(c.t.Name()), name)}
	cfg := &dc.Config{Hostname: name, Image: image, Cmd: args, Labels: map[string]string{"flint-e2e": runID}}
	hc := &dc.HostConfig{}
	if port != "" {
		p := dc.Port(port + "/tcp")
		cfg.ExposedPorts = map[dc.Port]struct{}{p: {}}
		hc.PortBindings = map[dc.Port][]dc.PortBinding{p: {{HostIP: "127.0.0.1"}}}
	}
	ctr, err := c.pool.Client.CreateContainer(dc.CreateContainerOptions{
		Name: n.cname, Config: cfg, HostConfig: hc,
		NetworkingConfig: &dc.NetworkingConfig{EndpointsConfig: map[string]*dc.EndpointConfig{
			c.net.Network.Name: {Aliases: []string{name}},
		}},
	})
	if err != nil {
		c.t.Fatalf("create container %s: %v", n.cname, err)
	}
	n.id = ctr.ID
	c.nodes = append(c.nodes, n)
	if len(files) > 0 {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for p, content := range files {
			tw.WriteHeader(&tar.Header{Name: strings.TrimPrefix(p, "/"), Mode: 0o600, Size: int64(len(content)), Typeflag: tar.TypeReg})
			tw.Write([]byte(content))
		}
		tw.Close()
		if err := c.pool.Client.UploadToContainer(n.id, dc.UploadToContainerOptions{Path: "/", InputStream: &buf}); err != nil {
			c.t.Fatalf("copy files into %s: %v", n.cname, err)
		}
	}
	if err := c.pool.Client.StartContainer(n.id, nil); err != nil {
		c.t.Fatalf("start container %s: %v", n.cname, err)
	}
	c.waitAddress(n)
	return n
}

// checkNoKeys fails when a key is in any container's output (the S3 server's too), in a
// Flint container's command line or environment, in the master's or an agent's /state, or
// in a file under an agent's work directory. It names where, never the key.
func (c *cluster) checkNoKeys(s3 *node, keys ...string) {
	c.t.Helper()
	found := func(where string, b []byte) {
		for i, k := range keys {
			if bytes.Contains(b, []byte(k)) {
				c.t.Errorf("key %d of %d is in %s", i+1, len(keys), where)
			}
		}
	}
	for _, n := range c.nodes {
		o, e := c.logs(n)
		found(n.name+"'s stdout", []byte(o))
		found(n.name+"'s stderr", []byte(e))
		if n == s3 {
			continue // its root account's keys are its command line
		}
		info, err := c.pool.Client.InspectContainer(n.id)
		if err != nil {
			c.t.Fatal(err)
		}
		found(n.name+"'s command line", []byte(strings.Join(append(info.Config.Entrypoint, info.Config.Cmd...), " ")))
		found(n.name+"'s environment", []byte(strings.Join(info.Config.Env, "\n")))
	}
	st, err := c.rawGet(c.master.hostURL + "/state")
	if err != nil {
		c.t.Fatal(err)
	}
	found("the master's /state", st)
	for _, a := range c.agents {
		st, err := c.rawGet(a.hostURL + "/state")
		if err != nil {
			c.t.Fatal(err)
		}
		found(a.name+"'s /state", st)
		// Through the agent's /files/browse and /files/read (as Mesos' agents serve
		// sandboxes): copying the work dir out of the container would carry a copy of the
		// executor binary per executor, tens of MB and minutes under load.
		files := 0
		var skipped []string
		var walk func(dir string)
		walk = func(dir string) {
			var ents []struct {
				Path string `json:"path"`
				Size int64  `json:"size"`
				Mode string `json:"mode"`
			}
			if err := c.getJSON(a.hostURL+"/files/browse?path="+url.QueryEscape(dir), &ents); err != nil {
				c.t.Fatalf("%s: browse %s: %v", a.name, dir, err)
			}
			for _, e := range ents {
				switch {
				case strings.HasPrefix(e.Mode, "d"):
					walk(e.Path)
				case strings.HasPrefix(e.Mode, "L"): // runs/latest: the run itself is walked
				case e.Size > 4<<20: // the executor binaries, built before the test
					skipped = append(skipped, path.Base(e.Path))
				default:
					var data []byte
					for len(data) < int(e.Size) { // /files/read answers at most 1 MiB
						var out struct {
							Data string `json:"data"`
						}
						u := fmt.Sprintf("%s/files/read?offset=%d&length=%d&path=%s", a.hostURL, len(data), e.Size, url.QueryEscape(e.Path))
						if err := c.getJSON(u, &out); err != nil {
							c.t.Fatalf("%s: read %s: %v", a.name, e.Path, err)
						}
						if out.Data == "" {
							break
						}
						data = append(data, out.Data...)
					}
					files++
					found(a.name+":"+e.Path, data)
				}
			}
		}
		walk(agentWorkDir + "/slaves")
		c.t.Logf("%s: searched %d files under %s; not searched, over 4 MiB: %q", a.name, files, agentWorkDir, skipped)
		if files == 0 {
			c.t.Errorf("%s's work dir holds no file: the executors' sandboxes were not searched", a.name)
		}
	}
	c.t.Logf("no key in %d containers' output, command lines, environments, /state or the agents' %d work dirs",
		len(c.nodes), len(c.agents))
}
