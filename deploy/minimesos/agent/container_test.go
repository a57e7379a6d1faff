package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// A container the agent cannot create is never run as a bare process: it
// fails as on a Mesos agent whose containerizers are "mesos" with no image
// provider and no CNI network — a DOCKER container is not supported
// (TASK_FAILED, REASON_EXECUTOR_TERMINATED, "Abnormal executor
// termination: unknown container"), an image or a named network fails the
// launch (TASK_FAILED, REASON_CONTAINER_LAUNCH_FAILED, with the
// provisioner's or the CNI isolator's words) — for custom executors and
// command tasks alike, before anything is fetched.
func TestContainersTheAgentCannotCreate(t *testing.T) {
	m := newFakeMaster()
	ta := startAgent(t, m, fastConfig(t, t.TempDir()))
	fw := fwInfo("fw", false)
	net := "cni1"
	img := &mesos.Image{Type: mesos.Image_DOCKER.Enum(), Docker: &mesos.Image_Docker{Name: "flint/exec:1"}}
	marker := filepath.Join(t.TempDir(), "fetched")
	if err := os.WriteFile(marker, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		id     string
		ci     mesos.ContainerInfo
		reason mesos.TaskStatus_Reason
		msg    string
	}{
		{"docker", mesos.ContainerInfo{Type: mesos.ContainerInfo_DOCKER.Enum(), Docker: &mesos.ContainerInfo_DockerInfo{Image: "flint/exec:1"}},
			mesos.REASON_EXECUTOR_TERMINATED, "Abnormal executor termination: unknown container"},
		{"image", mesos.ContainerInfo{Type: mesos.ContainerInfo_MESOS.Enum(), Mesos: &mesos.ContainerInfo_MesosInfo{Image: img}},
			mesos.REASON_CONTAINER_LAUNCH_FAILED, "Failed to launch container: Unsupported container image type: DOCKER"},
		{"network", mesos.ContainerInfo{Type: mesos.ContainerInfo_MESOS.Enum(), NetworkInfos: []mesos.NetworkInfo{{Name: &net}}},
			mesos.REASON_CONTAINER_LAUNCH_FAILED, "Failed to launch container: Unknown CNI network 'cni1'"},
	}
	for _, c := range cases {
		ci := c.ci
		ex := executorInfo("e-" + c.id)
		ex.Container = &ci
		ex.Command.URIs = []mesos.CommandInfo_URI{{Value: marker}}
		runTask(t, ta, fw, executorTask("x-"+c.id, "", ex))
		cmd := cmdTask("c-"+c.id, "true")
		cmd.Container = &ci
		cmd.Command.URIs = []mesos.CommandInfo_URI{{Value: marker}}
		runTask(t, ta, fw, cmd)
		for _, id := range []string{"x-" + c.id, "c-" + c.id} {
			st := m.waitState(t, id, mesos.TASK_FAILED)
			if st.GetReason() != c.reason || st.GetMessage() != c.msg {
				t.Errorf("%s: %v %q, want %v %q", id, st.GetReason(), st.GetMessage(), c.reason, c.msg)
			}
		}
	}
	// A plain task with the same URI fetches it: the search below finds
	// fetched files where they are.
	plain := cmdTask("plain", "true")
	plain.Command.URIs = []mesos.CommandInfo_URI{{Value: marker}}
	runTask(t, ta, fw, plain)
	m.waitState(t, "plain", mesos.TASK_FINISHED)
	var fetched []string
	_ = filepath.WalkDir(ta.cfg.WorkDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "fetched" {
			fetched = append(fetched, p)
		}
		return nil
	})
	if len(fetched) != 1 || !strings.Contains(fetched[0], "/plain") {
		t.Fatalf("fetched files %v, want only the plain task's", fetched)
	}
}
