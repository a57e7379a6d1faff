package agent

import (
	"fmt"
	"slices"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/deploy/minimesos/agent/containerizer"
)

// newDocker connects the Docker containerizer when cfg enables it.
func newDocker(cfg Config) (*containerizer.Docker, error) {
	if !slices.Contains(cfg.Containerizers, "docker") {
		return nil, nil
	}
	d, err := containerizer.NewDocker(cfg.DockerEndpoint)
	if err != nil {
		return nil, fmt.Errorf("agent: --containerizers docker: %w", err)
	}
	return d, nil
}

// checkContainer is containerizer.CheckContainerWith for this agent's
// containerizers.
func (a *Agent) checkContainer(ci *mesos.ContainerInfo) error {
	return containerizer.CheckContainerWith(ci, a.docker != nil)
}

// launch starts spec's process: in a Docker container named after ex's
// container id when its ContainerInfo is DOCKER (the host ports of its
// port mappings must be in res), else as a process.
func (a *Agent) launch(spec containerizer.Spec, ex *execRun, res []mesos.Resource) (*containerizer.Process, error) {
	if a.docker != nil && containerizer.IsDocker(spec.Container) {
		return a.docker.Launch(containerizer.DockerSpec{Spec: spec, Name: containerizer.DockerNamePrefix + ex.containerID, Resources: res})
	}
	return containerizer.Launch(spec)
}

// executorResources are an executor's and its tasks' resources, those a
// container's host ports must come from.
func executorResources(ex *execRun) []mesos.Resource {
	res := append([]mesos.Resource(nil), ex.info.Resources...)
	for _, t := range ex.tasks {
		res = append(res, t.info.Resources...)
	}
	return res
}
