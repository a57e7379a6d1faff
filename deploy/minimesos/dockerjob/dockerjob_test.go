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
	"strings"
	"testing"
	"time"

	dc "github.com/ory/dockertest/v3/docker"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/agent"
	"github.com/flint-mesos/flint/deploy/minimesos/cluster"
	"github.com/flint-mesos/flint/internal/uuid"
)

// flintImage builds a static flint binary and an image FROM scratch
// holding it as /flint (with deploy/docker's rootfs: passwd, group, /tmp),
// without an ENTRYPOINT; it returns the binary, the image and the Docker
// bridge network's gateway address (where the host is reachable from
// containers). Without a Docker daemon the test fails.
func flintImage(t *testing.T) (bin, image, gateway string) {
	t.Helper()
	client, err := dc.NewClientFromEnv()
	if err != nil {
		t.Fatalf("this test needs a Docker daemon (DOCKER_HOST, or /var/run/docker.sock): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.PingWithContext(ctx); err != nil {
		t.Fatalf("this test needs a reachable Docker daemon at %s: %v", client.Endpoint(), err)
	}
	gateway, err = bridgeGateway(client)
	if err != nil {
		t.Fatalf("Docker's bridge network: %v", err)
	}
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin = filepath.Join(dir, "flint")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/flint")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building a static flint (CGO_ENABLED=0 go build ./cmd/flint): %v\n%s", err, out)
	}
	if err := os.CopyFS(filepath.Join(dir, "rootfs"), os.DirFS(filepath.Join(root, "deploy", "docker", "rootfs"))); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(dir, "rootfs", "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY rootfs/ /\nCOPY flint /flint\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	image = "flint-minimesos-docker:" + uuid.NewString()[:8]
	var out bytes.Buffer
	if err := client.BuildImage(dc.BuildImageOptions{Name: image, ContextDir: dir, OutputStream: &out, RmTmpContainer: true}); err != nil {
		t.Fatalf("docker build of %s (FROM scratch): %v\n%s", image, err, out.String())
	}
	t.Cleanup(func() { _ = client.RemoveImageExtended(image, dc.RemoveImageOptions{Force: true}) })
	return bin, image, gateway
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
	master := strings.TrimPrefix(c.URL(), "http://")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "submit", "--master", "mesos://"+master,
		"--conf", "flint.driver.host="+gw, "--conf", "flint.driver.bindAddress="+gw,
		"--conf", "flint.mesos.executor.docker.image="+image, "--conf", "flint.mesos.executor.home=/",
		"--conf", "flint.executor.cores=1", "--conf", "flint.executor.memory=256m",
		"--example", "pi", "8", "20000")
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("flint submit: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	want := fmt.Sprintf("Pi is roughly %.6f (8 slices × 20000 samples)\n", piInPlainGo(8, 20000))
	if stdout.String() != want {
		t.Fatalf("driver printed %q, want %q (plain Go)\nstderr:\n%s", stdout.String(), want, stderr.String())
	}
	if !strings.Contains(stderr.String(), " added on "+gw) || strings.Contains(stderr.String(), " lost: ") {
		t.Errorf("want executors added on %s and none lost:\n%s", gw, stderr.String())
	}
}
