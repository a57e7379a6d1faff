package framework

import (
	"github.com/flint-mesos/flint/framework/dagscheduler"
)

// dagConfig maps flint.* keys onto the DAG core's Config.
func dagConfig(cfg *Config) dagscheduler.Config {
	return dagscheduler.Config{
		MaxConsecutiveStageAttempts: cfg.Int("flint.stage.maxConsecutiveAttempts"),
		DisableReduceLocality:       !cfg.Bool("flint.shuffle.reduceLocality.enabled"),
		UnregisterOutputOnHost:      cfg.Bool("flint.files.fetchFailure.unRegisterOutputOnHost"),
		ShuffleService:              cfg.Bool("flint.shuffle.service.enabled"),
	}
}
