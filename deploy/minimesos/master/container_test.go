package master_test

import (
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/flint-mesos/flint/deploy/minimesos/minimesostest"
)

// The master refuses a task or an executor whose ContainerInfo Mesos'
// common validation refuses, TASK_ERROR / REASON_TASK_INVALID from the
// master, with Mesos' words (src/common/validation.cpp,
// src/master/validation.cpp).
func TestInvalidContainerInfo(t *testing.T) {
	forCodecs(t, func(t *testing.T, codec encoding.Codec) {
		s := minimesostest.NewServer(t, minimesostest.WithFakeAgents(1, nil))
		c := subscribe(t, s, codec, frameworkInfo("ci"))
		o := c.next(scheduler.Event_OFFERS).Offers.Offers[0]
		host := "/h"
		docker := mesos.ContainerInfo_DOCKER
		cases := []struct {
			id   string
			ci   mesos.ContainerInfo
			exec bool
			want string
		}{
			{"no-host-path", mesos.ContainerInfo{Type: mesos.ContainerInfo_MESOS.Enum(), Volumes: []mesos.Volume{{ContainerPath: "/data", Mode: mesos.RW.Enum()}}}, false,
				"Task's `ContainerInfo` is invalid: Invalid volume: Only one of them should be set: 'host_path', 'image' and 'source'"},
			{"two-sources", mesos.ContainerInfo{Type: mesos.ContainerInfo_MESOS.Enum(), Volumes: []mesos.Volume{{ContainerPath: "/d", HostPath: &host, Mode: mesos.RW.Enum(),
				Source: &mesos.Volume_Source{Type: mesos.Volume_Source_SECRET}}}}, false,
				"Task's `ContainerInfo` is invalid: Invalid volume: Only one of them should be set: 'host_path', 'image' and 'source'"},
			{"secret-unset", mesos.ContainerInfo{Type: mesos.ContainerInfo_MESOS.Enum(), Volumes: []mesos.Volume{{ContainerPath: "s", Mode: mesos.RO.Enum(),
				Source: &mesos.Volume_Source{Type: mesos.Volume_Source_SECRET}}}}, true,
				"Executor's `ContainerInfo` is invalid: Invalid volume: 'source.secret' is not set for SECRET volume"},
			{"docker-no-info", mesos.ContainerInfo{Type: &docker}, true,
				"Executor's `ContainerInfo` is invalid: DockerInfo 'docker' is not set for DOCKER typed ContainerInfo"},
			{"docker-name", mesos.ContainerInfo{Type: &docker, Docker: &mesos.ContainerInfo_DockerInfo{Image: "img",
				Parameters: []mesos.Parameter{{Key: "name", Value: "x"}}}}, false,
				"Task's `ContainerInfo` is invalid: Parameter in DockerInfo must not be 'name'"},
		}
		var tasks []mesos.TaskInfo
		for _, tc := range cases {
			ti := commandTask(tc.id, o, 0.1, 1)
			ci := tc.ci
			if tc.exec {
				ti.Executor = &mesos.ExecutorInfo{ExecutorID: mesos.ExecutorID{Value: "e-" + tc.id}, Command: ti.Command, Container: &ci}
				ti.Command = nil
			} else {
				ti.Container = &ci
			}
			tasks = append(tasks, ti)
		}
		c.mustCall(calls.Accept(calls.OfferOperations{calls.OpLaunch(tasks...)}.WithOffers(o.ID)))
		for _, tc := range cases {
			st := c.nextUpdate(tc.id)
			if st.GetState() != mesos.TASK_ERROR || st.GetReason() != mesos.REASON_TASK_INVALID || st.GetSource() != mesos.SOURCE_MASTER || st.GetMessage() != tc.want {
				t.Errorf("%s: %v %v %v %q, want TASK_ERROR REASON_TASK_INVALID from the master: %q", tc.id, st.GetState(), st.GetReason(), st.GetSource(), st.GetMessage(), tc.want)
			}
		}
	})
}
