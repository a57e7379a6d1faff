package master

import (
	"errors"
	"fmt"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// validateContainerInfo is Mesos' common::validation::validateContainerInfo
// (src/common/validation.cpp), word for word: each volume has exactly one
// of host_path, image and source (and its source's detail), a DOCKER
// container has a DockerInfo, and no Docker parameter names the container.
// The master refuses a task or an executor failing it (TASK_ERROR,
// REASON_TASK_INVALID) with "Task's `ContainerInfo` is invalid: " or
// "Executor's `ContainerInfo` is invalid: " before it.
func validateContainerInfo(ci *mesos.ContainerInfo) error {
	if ci == nil {
		return nil
	}
	for _, v := range ci.Volumes {
		if err := validateVolume(v); err != nil {
			return fmt.Errorf("Invalid volume: %w", err)
		}
	}
	if ci.GetType() == mesos.ContainerInfo_DOCKER {
		if ci.Docker == nil {
			return errors.New("DockerInfo 'docker' is not set for DOCKER typed ContainerInfo")
		}
		for _, p := range ci.Docker.Parameters {
			if p.Key == "name" {
				return errors.New("Parameter in DockerInfo must not be 'name'")
			}
		}
	}
	return nil
}

// validateVolume is Mesos' validateVolume.
func validateVolume(v mesos.Volume) error {
	n := 0
	for _, set := range []bool{v.HostPath != nil, v.Image != nil, v.Source != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New("Only one of them should be set: 'host_path', 'image' and 'source'")
	}
	src := v.Source
	if src == nil {
		return nil
	}
	missing := map[mesos.Volume_Source_Type]struct {
		set  bool
		what string
	}{
		mesos.Volume_Source_DOCKER_VOLUME: {src.DockerVolume != nil, "'source.docker_volume' is not set for DOCKER_VOLUME volume"},
		mesos.Volume_Source_HOST_PATH:     {src.HostPath != nil, "'source.host_path' is not set for HOST_PATH volume"},
		mesos.Volume_Source_SANDBOX_PATH:  {src.SandboxPath != nil, "'source.sandbox_path' is not set for SANDBOX_PATH volume"},
		mesos.Volume_Source_SECRET:        {src.Secret != nil, "'source.secret' is not set for SECRET volume"},
	}
	m, known := missing[src.GetType()]
	switch {
	case !known:
		return errors.New("'source.type' is unknown")
	case !m.set:
		return errors.New(m.what)
	}
	return nil
}
