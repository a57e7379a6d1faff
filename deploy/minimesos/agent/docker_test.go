package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	dc "github.com/ory/dockertest/v3/docker"

	"github.com/flint-mesos/flint/deploy/minimesos/link"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
	"github.com/flint-mesos/flint/internal/uuid"
)

// probeImage builds an image FROM scratch holding testdata/dockerprobe,
// statically linked, as /probe (no registry: the e2e suite's way), and
// removes it when t ends. Without a reachable Docker daemon t fails.
func probeImage(t *testing.T) (*dc.Client, string) {
	t.Helper()
	client, err := dc.NewClientFromEnv()
	if err != nil {
		t.Fatalf("the Docker containerizer tests need a Docker daemon (DOCKER_HOST, or /var/run/docker.sock): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.PingWithContext(ctx); err != nil {
		t.Fatalf("the Docker containerizer tests need a reachable Docker daemon at %s: %v", client.Endpoint(), err)
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "probe"), "./testdata/dockerprobe")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the static probe: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch\nCOPY probe /probe\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	image := "flint-minimesos-probe:" + uuid.NewString()[:8]
	var out bytes.Buffer
	if err := client.BuildImage(dc.BuildImageOptions{Name: image, ContextDir: dir, OutputStream: &out, RmTmpContainer: true}); err != nil {
		t.Fatalf("docker build of %s (FROM scratch): %v\n%s", image, err, out.String())
	}
	t.Cleanup(func() { _ = client.RemoveImageExtended(image, dc.RemoveImageOptions{Force: true}) })
	return client, image
}

func dockerInfo(image string, net mesos.ContainerInfo_DockerInfo_Network, maps ...mesos.ContainerInfo_DockerInfo_PortMapping) *mesos.ContainerInfo {
	return &mesos.ContainerInfo{Type: mesos.ContainerInfo_DOCKER.Enum(),
		Docker: &mesos.ContainerInfo_DockerInfo{Image: image, Network: net.Enum(), PortMappings: maps}}
}

func probeTask(id, image string, ports []mesos.Value_Range, maps []mesos.ContainerInfo_DockerInfo_PortMapping, args ...string) *mesos.TaskInfo {
	ti := cmdTask(id, "/probe")
	no := false
	ti.Command.Shell, ti.Command.Arguments = &no, args
	ti.Container = dockerInfo(image, mesos.ContainerInfo_DockerInfo_BRIDGE, maps...)
	if ports != nil {
		ti.Resources = append(ti.Resources, mesos.Resource{Name: "ports", Type: mesos.RANGES.Enum(), Ranges: &mesos.Value_Ranges{Range: ports}})
	}
	return ti
}

// findFile is the one file named name under dir.
func findFile(t *testing.T, dir, name string) string {
	t.Helper()
	var found []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == name && strings.Contains(p, "/ok/") {
			found = append(found, p)
		}
		return nil
	})
	if len(found) != 1 {
		t.Fatalf("files %s under %s: %v, want one", name, dir, found)
	}
	return found[0]
}

// With --containerizers docker,mesos a DOCKER container runs in its image
// through the Docker Engine API, as Mesos' Docker containerizer: the
// sandbox mounted at /mnt/mesos/sandbox (MESOS_SANDBOX), stdout in the
// sandbox, the exit status reported; a custom executor in a container
// subscribes (host network) and its exit status reaches the master; an
// image not on the daemon and a host port outside the task's resources
// fail the launch in Mesos' words; a kill stops the container; no
// container is left behind once the agent closed.
func TestDockerContainerizer(t *testing.T) {
	client, image := probeImage(t)
	m := newFakeMaster()
	cfg := fastConfig(t, t.TempDir())
	cfg.Containerizers = []string{"docker", "mesos"}
	cfg.Resources = "cpus:8;mem:4096;disk:1024;ports:[31000-31010]"
	ta := startAgent(t, m, cfg)
	fw := fwInfo("fw", false)
	in := []mesos.Value_Range{{Begin: 31005, End: 31005}}
	mapping := func(host uint32) []mesos.ContainerInfo_DockerInfo_PortMapping {
		return []mesos.ContainerInfo_DockerInfo_PortMapping{{HostPort: host, ContainerPort: 8080}}
	}

	runTask(t, ta, fw, probeTask("ok", image, in, mapping(31005), "exit", "0"))
	runTask(t, ta, fw, probeTask("three", image, nil, nil, "exit", "3"))
	runTask(t, ta, fw, probeTask("sleep", image, nil, nil, "sleep"))
	runTask(t, ta, fw, probeTask("missing", "flint-no-such-image:h27c", nil, nil, "exit", "0"))
	runTask(t, ta, fw, probeTask("port", image, []mesos.Value_Range{{Begin: 31006, End: 31006}}, mapping(31009), "exit", "0"))

	m.waitState(t, "ok", mesos.TASK_FINISHED)
	env, err := os.ReadFile(findFile(t, ta.workDir, "probe"))
	if err != nil || !strings.Contains(string(env), "\nMESOS_SANDBOX=/mnt/mesos/sandbox\n") {
		t.Errorf("the probe's environment (%v): %s, want MESOS_SANDBOX=/mnt/mesos/sandbox", err, env)
	}
	stdout, err := os.ReadFile(findFile(t, ta.workDir, "stdout"))
	if err != nil || !strings.Contains(string(stdout), "hello from the container") {
		t.Errorf("the ok task's stdout (%v): %q", err, stdout)
	}
	st := m.waitState(t, "three", mesos.TASK_FAILED)
	if st.GetMessage() != "Command exited with status 3" || st.GetReason() != mesos.REASON_COMMAND_EXECUTOR_FAILED {
		t.Errorf("three: %v %q, want REASON_COMMAND_EXECUTOR_FAILED %q", st.GetReason(), st.GetMessage(), "Command exited with status 3")
	}
	for id, want := range map[string]string{
		"missing": "Failed to launch container: Failed to run 'docker pull flint-no-such-image:h27c': ",
		"port":    "Failed to launch container: Port [31009] not included in resources",
	} {
		st := m.waitState(t, id, mesos.TASK_FAILED)
		if !strings.HasPrefix(st.GetMessage(), want) || st.GetReason() != mesos.REASON_CONTAINER_LAUNCH_FAILED {
			t.Errorf("%s: %v %q, want REASON_CONTAINER_LAUNCH_FAILED %q", id, st.GetReason(), st.GetMessage(), want)
		}
	}
	m.waitState(t, "sleep", mesos.TASK_RUNNING)
	m.deliver(t, link.MasterMessage{KillTask: &link.KillTask{FrameworkID: *fw.ID, TaskID: mesos.TaskID{Value: "sleep"}}})
	m.waitState(t, "sleep", mesos.TASK_KILLED)

	// A custom executor: the probe is minimesostest/testexecutor with Env=1.
	// One in an image the daemon lacks: its task fails the launch and the
	// master hears the executor ended with no wait status (-1), as Mesos'
	// agent reports a container that never ran a process.
	for _, c := range []struct{ id, mode, data, image string }{
		{"fin", "", "finish", image}, {"crash", "crash", "finish", image}, {"gone", "", "finish", "flint-no-such-image:h27c"},
	} {
		ex := executorInfo("e-"+c.id, "TESTEXEC_MODE", c.mode)
		probe := "/probe"
		ex.Command.Value = &probe
		ex.Container = dockerInfo(c.image, mesos.ContainerInfo_DockerInfo_HOST)
		runTask(t, ta, fw, executorTask(c.id, c.data, ex))
	}
	m.waitState(t, "fin", mesos.TASK_FINISHED)
	if got := m.waitExited(t, "e-crash"); got.Status != 2<<8 {
		t.Errorf("crashed executor's status %d, want %d (exited with status 2)", got.Status, 2<<8)
	}
	m.waitState(t, "crash", mesos.TASK_FAILED)
	if st := m.waitState(t, "gone", mesos.TASK_FAILED); st.GetReason() != mesos.REASON_CONTAINER_LAUNCH_FAILED {
		t.Errorf("gone: %v %q, want REASON_CONTAINER_LAUNCH_FAILED", st.GetReason(), st.GetMessage())
	}
	if got := m.waitExited(t, "e-gone"); got.Status != -1 {
		t.Errorf("status of an executor whose container never started: %d, want -1 (unknown)", got.Status)
	}

	// Closing the agent kills the executor still running ("fin"'s); its
	// container is removed too.
	ta.Close()
	waitContainersGone(t, client, image)
}

// waitContainersGone waits until no container of image is left.
func waitContainersGone(t *testing.T, client *dc.Client, image string) {
	t.Helper()
	waitfor.Msg(t, 20*time.Second, func() string {
		left, err := client.ListContainers(dc.ListContainersOptions{All: true, Filters: map[string][]string{"ancestor": {image}}})
		if err == nil && len(left) == 0 {
			return ""
		}
		return fmt.Sprintf("containers of %s left: %v (%v)", image, left, err)
	})
}

// Containerizers other than Mesos' two are a configuration error.
func TestUnknownContainerizer(t *testing.T) {
	cfg := fastConfig(t, t.TempDir())
	cfg.Containerizers = []string{"docker", "rkt"}
	_, err := New(cfg)
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `unknown containerizer "rkt"`) {
		t.Fatalf("New with containerizer rkt: %v, want ErrConfig naming it", err)
	}
}
