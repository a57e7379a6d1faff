package containerizer

import (
	"errors"
	"fmt"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// ErrNotSupported: no containerizer of the agent can create the container
// (Mesos' Containerizer::LaunchResult::NOT_SUPPORTED) — a DOCKER
// ContainerInfo on an agent without Mesos' Docker containerizer. Mesos'
// agent then logs that "None of the enabled containerizers (mesos) could
// create a container for the provided TaskInfo/ExecutorInfo message", and
// the executor's tasks end TASK_FAILED, REASON_EXECUTOR_TERMINATED,
// "Abnormal executor termination: unknown container" (NotSupportedMessage).
var ErrNotSupported = errors.New("None of the enabled containerizers (mesos) could create a container for the provided TaskInfo/ExecutorInfo message")

// NotSupportedMessage is the status message of tasks whose container no
// containerizer could create (Slave::executorTerminated).
const NotSupportedMessage = "Abnormal executor termination: unknown container"

// launchRefusal is a launch failure in Mesos' own words (the agent puts
// "Failed to launch container: " before it); it is ErrLaunch.
type launchRefusal string

func (e launchRefusal) Error() string        { return string(e) }
func (e launchRefusal) Is(target error) bool { return target == ErrLaunch }

// CheckContainer refuses, before anything is fetched, a container this
// agent's containerizer (Mesos' own, with no image provisioner and no CNI
// network configured) cannot create, as Mesos' agent would: a DOCKER
// container is ErrNotSupported; an image fails as the provisioner fails
// ("Unsupported container image type: DOCKER",
// src/slave/containerizer/mesos/provisioner/provisioner.cpp) and a named
// network as the CNI isolator fails ("Unknown CNI network 'NAME'",
// network/cni/cni.cpp). Both are launch failures (ErrLaunch):
// TASK_FAILED, REASON_CONTAINER_LAUNCH_FAILED. Volumes and secrets are
// the process containerizer's (Launch).
func CheckContainer(ci *mesos.ContainerInfo) error {
	return CheckContainerWith(ci, false)
}

// IsDocker reports whether ci is a DOCKER container (for the Docker
// containerizer).
func IsDocker(ci *mesos.ContainerInfo) bool {
	return ci.GetType() == mesos.ContainerInfo_DOCKER
}

// CheckContainerWith is CheckContainer on an agent whose containerizers
// include Docker's when docker is true: a DOCKER container is then the
// Docker containerizer's (checked as it launches).
func CheckContainerWith(ci *mesos.ContainerInfo, docker bool) error {
	if ci == nil {
		return nil
	}
	if IsDocker(ci) {
		if docker {
			return nil
		}
		return ErrNotSupported
	}
	if img := ci.GetMesos().GetImage(); img != nil {
		return launchRefusal(fmt.Sprintf("Unsupported container image type: %s", img.GetType()))
	}
	for _, n := range ci.NetworkInfos {
		if n.Name != nil {
			return launchRefusal(fmt.Sprintf("Unknown CNI network '%s'", n.GetName()))
		}
	}
	return nil
}
