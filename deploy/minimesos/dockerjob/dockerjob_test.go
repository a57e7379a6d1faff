package dockerjob

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	dc "github.com/ory/dockertest/v3/docker"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/examples/wordcount"
	"github.com/flint-mesos/flint/internal/uuid"
)

// shared is the image every test of the package runs its executors in,
// built once (flintImage) and removed by TestMain.
var shared struct {
	once                sync.Once
	err                 error
	client              *dc.Client
	dir                 string
	bin, image, gateway string
	burst               string // e2e/internal/burst, static
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.image != "" {
		_ = shared.client.RemoveImageExtended(shared.image, dc.RemoveImageOptions{Force: true})
	}
	if shared.dir != "" {
		_ = os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// flintImage builds (once per test binary) a static flint binary and an
// image FROM scratch holding it as /flint (with deploy/docker's rootfs:
// passwd, group, /tmp), without an ENTRYPOINT; it returns the binary, the
// image and the Docker bridge network's gateway address (where the host
// is reachable from containers). Without a Docker daemon the test fails.
func flintImage(t *testing.T) (bin, image, gateway string) {
	t.Helper()
	shared.once.Do(func() { shared.err = buildImage() })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.bin, shared.image, shared.gateway
}

func buildImage() error {
	client, err := dc.NewClientFromEnv()
	if err != nil {
		return fmt.Errorf("this test needs a Docker daemon (DOCKER_HOST, or /var/run/docker.sock): %w", err)
	}
	shared.client = client
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.PingWithContext(ctx); err != nil {
		return fmt.Errorf("this test needs a reachable Docker daemon at %s: %w", client.Endpoint(), err)
	}
	if shared.gateway, err = bridgeGateway(client); err != nil {
		return fmt.Errorf("Docker's bridge network: %w", err)
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		return err
	}
	if shared.dir, err = os.MkdirTemp("", "flint-dockerjob-"); err != nil {
		return err
	}
	dir := shared.dir
	bin := filepath.Join(dir, "flint")
	// The e2e suite's dynamic-allocation driver too: the standalone test
	// runs it.
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", dir+"/", "./cmd/flint", "./e2e/internal/burst")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building a static flint and burst (CGO_ENABLED=0 go build ./cmd/flint ./e2e/internal/burst): %w\n%s", err, out)
	}
	shared.burst = filepath.Join(dir, "burst")
	if err := os.CopyFS(filepath.Join(dir, "rootfs"), os.DirFS(filepath.Join(root, "deploy", "docker", "rootfs"))); err != nil {
		return err
	}
	tmp := filepath.Join(dir, "rootfs", "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o1777); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY rootfs/ /\nCOPY flint /flint\n"), 0o644); err != nil {
		return err
	}
	image := "flint-minimesos-docker:" + uuid.NewString()[:8]
	var out bytes.Buffer
	if err := client.BuildImage(dc.BuildImageOptions{Name: image, ContextDir: dir, OutputStream: &out, RmTmpContainer: true}); err != nil {
		return fmt.Errorf("docker build of %s (FROM scratch): %w\n%s", image, err, out.String())
	}
	shared.bin, shared.image = bin, image
	return nil
}

// bridgeGateway is the host's address on Docker's default bridge network:
// its IPAM gateway, else the IPv4 address of its bridge interface.
func bridgeGateway(client *dc.Client) (string, error) {
	bridge, err := client.NetworkInfo("bridge")
	if err != nil {
		return "", err
	}
	for _, c := range bridge.IPAM.Config {
		if c.Gateway != "" {
			return c.Gateway, nil
		}
	}
	name := bridge.Options["com.docker.network.bridge.name"]
	if name == "" {
		name = "docker0"
	}
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return "", err
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		return "", err
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
			return ipn.IP.String(), nil
		}
	}
	return "", fmt.Errorf("interface %s has no IPv4 address", name)
}

// piInPlainGo is examples/pi's estimate computed here without Flint: the
// same slices (seed i+1), the same generator, the same count.
func piInPlainGo(slices int, samples int64) float64 {
	var inside int64
	for i := range slices {
		seed := uint64(i) + 1
		r := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
		for range samples {
			x, y := r.Float64()*2-1, r.Float64()*2-1
			if x*x+y*y <= 1 {
				inside++
			}
		}
	}
	return 4 * float64(inside) / float64(int64(slices)*samples)
}

// A real Flint job in coarse mode whose executors run in a FROM scratch
// image holding the flint binary (flint.mesos.executor.docker.image,
// flint.mesos.executor.home=/), under the Docker containerizer of
// minimesos' agents, on Docker's bridge network with the shuffle server's
// port mapped from the offer's ports: the driver (the static flint,
// `flint submit --example pi`) prints the estimate plain Go computes. The
// executors can only have run in the image's containers: they run /flint,
// which only the image holds, from a DOCKER ContainerInfo, which agents
// without the Docker containerizer refuse.
func TestCoarseExecutorsInDockerContainers(t *testing.T) {
	bin, image, gw := flintImage(t)
	master := dockerCluster(t, gw)
	stdout, stderr := submit(t, bin, master, gw, image, "--example", "pi", "8", "20000")
	want := fmt.Sprintf("Pi is roughly %.6f (8 slices × 20000 samples)\n", piInPlainGo(8, 20000))
	if stdout != want {
		t.Fatalf("driver printed %q, want %q (plain Go)\nstderr:\n%s", stdout, want, stderr)
	}
	if !strings.Contains(stderr, " added on "+gw) || strings.Contains(stderr, " lost: ") {
		t.Errorf("want executors added on %s and none lost:\n%s", gw, stderr)
	}
}

// Fine mode's executors in the same image: every Flint task is a Mesos
// task whose executor runs /flint in a container on Docker's bridge, its
// result server's and shuffle server's ports mapped from the offer. The
// wordcount example (8 map, 4 reduce partitions) shuffles between those
// containers through the mapped shuffle ports, and with
// flint.task.maxDirectResultSize=1 every result is fetched by the driver
// from an executor's result server through its mapped port; the printed
// counts equal a count made here of the same text with the example's
// tokenizer.
func TestFineExecutorsInDockerContainers(t *testing.T) {
	bin, image, gw := flintImage(t)
	master := dockerCluster(t, gw)
	stdout, stderr := submit(t, bin, master, gw, image, "--conf", "flint.mesos.coarse=false",
		"--conf", "flint.task.maxDirectResultSize=1", "--conf", "flint.default.parallelism=8",
		"--example", "wordcount", "--", "--top", "100000", "--partitions", "4")
	if want := wordCountInPlainGo(t); stdout != want {
		t.Fatalf("driver printed\n%s\nwant (counted here)\n%s\nstderr:\n%s", stdout, want, stderr)
	}
	if strings.Contains(stderr, "FetchFailed") || strings.Contains(stderr, " lost: ") {
		t.Errorf("want no fetch failure and no executor lost:\n%s", stderr)
	}
}

// dockerCluster starts an embedded minimesos master and one agent with the
// Docker containerizer on the bridge gateway's address gw, offering ports
// 31000-31100, and returns the master's host:port.
func dockerCluster(t *testing.T, gw string) string {
	t.Helper()
	log := logrus.New()
	log.SetLevel(logrus.WarnLevel)
	c, err := cluster.Start(context.Background(), cluster.Config{
		Listen: net.JoinHostPort(gw, "0"), Agents: 1, AgentListen: net.JoinHostPort(gw, "0"), Logger: log,
		Agent: agent.Config{WorkDir: t.TempDir(), Hostname: gw, Containerizers: []string{"docker", "mesos"},
			Resources: "cpus:3;mem:2048;disk:2048;ports:[31000-31100]", Logger: log},
	})
	if err != nil {
		t.Fatal(err)
	}
	// One agent: agents on one host offering the same ports would map the
	// same host ports (Docker refuses the second: "port is already
	// allocated"), as two Mesos agents configured alike on one host would.
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return strings.TrimPrefix(c.URL(), "http://")
}

// submit runs the static flint's `flint submit` against master with the
// driver on gw and executors in image (flint.mesos.executor.home=/, one
// core each), then args; it fails the test unless the driver exits 0.
func submit(t *testing.T, bin, master, gw, image string, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := runSubmit(t, bin, master, gw, image, args...)
	if err != nil {
		t.Fatalf("flint submit: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	return stdout, stderr
}

// runSubmit is submit returning the driver's exit error instead of
// failing the test on it.
func runSubmit(t *testing.T, bin, master, gw, image string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"submit", "--master", "mesos://" + master,
		"--conf", "flint.driver.host=" + gw, "--conf", "flint.driver.bindAddress=" + gw,
		"--conf", "flint.mesos.executor.docker.image=" + image, "--conf", "flint.mesos.executor.home=/",
		"--conf", "flint.executor.cores=1", "--conf", "flint.executor.memory=256m"}, args...)...)
	cmd.Dir = t.TempDir()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// wordCountInPlainGo is the wordcount example's output for its bundled
// sample text, counted here with the example's tokenizer.
func wordCountInPlainGo(t *testing.T) string {
	t.Helper()
	text, err := os.ReadFile("../../../examples/wordcount/sample.txt")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	var r wordcount.Result
	for _, line := range strings.Split(strings.TrimSuffix(string(text), "\n"), "\n") {
		wordcount.Words(line, func(w string) { counts[w]++; r.Words++ })
	}
	for w, n := range counts {
		r.Top = append(r.Top, wordcount.WordCount{Word: w, Count: n})
	}
	r.Distinct = int64(len(counts))
	sort.Slice(r.Top, func(i, j int) bool { return wordcount.Before(r.Top[i], r.Top[j]) })
	var buf bytes.Buffer
	if err := wordcount.Print(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// An executor image the Docker daemon does not have (and no registry can
// serve: these machines pull nothing) fails the job, in both modes, with
// an error that names Mesos' reason — the agent's "Failed to run 'docker
// pull <image>'" — instead of leaving the driver waiting for executors
// that never start; the driver prints no result and exits non-zero. Coarse
// mode excludes the agent after its executor failures and aborts once no
// agent is left (flint.mesos.coarse.noExecutorTimeout); fine mode excludes
// the executor from the task set, then aborts it as unschedulable after
// flint.scheduler.excludeOnFailure.unschedulableTaskSetTimeout (Spark's
// rule; 5 s here instead of 120 s), naming the last failure.
func TestMissingImageFailsTheJob(t *testing.T) {
	bin, _, gw := flintImage(t)
	const image = "flint-no-such-image:dockerjob"
	for _, mode := range []string{"coarse", "fine"} {
		t.Run(mode, func(t *testing.T) {
			master := dockerCluster(t, gw)
			stdout, stderr, err := runSubmit(t, bin, master, gw, image, "--conf", "flint.mesos.coarse="+fmt.Sprint(mode == "coarse"),
				"--conf", "flint.mesos.executor.agentExclusionTimeout=2h", "--conf", "flint.mesos.noOfferFitTimeout=1h",
				"--conf", "flint.scheduler.excludeOnFailure.unschedulableTaskSetTimeout=5s",
				"--example", "pi", "2", "100")
			if err == nil {
				t.Fatalf("flint submit exited 0 with a missing image\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			}
			if stdout != "" {
				t.Errorf("driver printed a result: %q", stdout)
			}
			last := stderr[strings.LastIndex(strings.TrimSuffix(stderr, "\n"), "\n")+1:]
			for _, want := range []string{"flint: framework: job 0 (pi) aborted", "Failed to run 'docker pull " + image + "'", "REASON_CONTAINER_LAUNCH_FAILED"} {
				if !strings.Contains(last, want) {
					t.Errorf("the driver's last line lacks %q: %q\nstderr:\n%s", want, last, stderr)
				}
			}
		})
	}
}
