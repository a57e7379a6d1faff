package framework

import (
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/allocation"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/dagscheduler"
	"github.com/flint-mesos/flint/shuffle/shuffleserver"
)

// dagConfig maps flint.* keys onto the DAG core's Config.
func dagConfig(cfg *Config) dagscheduler.Config {
	return dagscheduler.Config{
		MaxConsecutiveStageAttempts: cfg.Int("flint.stage.maxConsecutiveAttempts"),
		DisableReduceLocality:       !cfg.Bool("flint.shuffle.reduceLocality.enabled"),
		UnregisterOutputOnHost:      cfg.Bool("flint.files.fetchFailure.unRegisterOutputOnHost"),
		ShuffleService:              cfg.Bool("flint.shuffle.service.enabled"),
		ServerOf:                    shuffleServer,
	}
}

// shuffleServer names the shuffle server a map output's address reads
// from — its base URL and certificate pin, whatever store, namespace or
// executor the address names — so that a fetch failure drops only the
// outputs of the server that failed (dagscheduler.Config.ServerOf).
func shuffleServer(address string) string {
	a, err := shuffleserver.ParseAddress(address)
	if err != nil {
		return address
	}
	if a.HostPort == "" {
		return "file:" // the stores local mode does not serve: one process, one server
	}
	return a.BaseURL() + " " + a.Pin
}

// allocationConfig is dynamic allocation's settings when it is enabled
// and the backend launches executors (coarse-grained Mesos, under a Mesos
// or the embedded master); nil otherwise. Fine-grained mode holds
// resources only while tasks run, and local mode has no executors to
// release: the keys are noted and ignored there.
func allocationConfig(cfg *Config, master backend.Master, log logrus.FieldLogger) (*allocation.Config, error) {
	ac, enabled, err := cfg.DynamicAllocation()
	if err != nil || !enabled {
		return nil, err
	}
	if name := backend.Name(master, cfg); name != backend.MesosCoarse && !(name == backend.Embedded && cfg.Bool("flint.mesos.coarse")) {
		log.Infof("flint.dynamicAllocation.enabled is ignored by the %s backend: only coarse-grained Mesos executors are launched and released (fine-grained mode holds resources only while tasks run)", name)
		return nil, nil
	}
	return &ac, nil
}
