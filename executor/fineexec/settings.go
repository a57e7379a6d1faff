package fineexec

import (
	"errors"
	"fmt"
	"time"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/config/jobconf"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// Settings is what the driver hands every executor in ExecutorInfo.data:
// the executor's view of a flintpb.ExecutorSettings (proto/contract
// encodes it). It holds the result-server secret: never log it.
type Settings struct {
	// TaskCPUs is flint.task.cpus, for descriptions that carry no cpus.
	TaskCPUs int
	// MaxResultSize is flint.driver.maxResultSize (0: unlimited).
	MaxResultSize int64
	// MaxDirectResultSize is the largest inline result (at most MaxInlineResult).
	MaxDirectResultSize int64
	// Secret authenticates the driver to the result server.
	Secret string
	// DriverHost is the driver's host; the result server listens on the
	// local address that routes to it.
	DriverHost string
	// IdleTimeout ends the executor after this long without tasks (0: never).
	IdleTimeout time.Duration
	// LogLevel and LogFormat are flint.log.level and flint.log.format.
	LogLevel  string
	LogFormat string
	// DriverID names the driver (the Mesos framework id) in logs.
	DriverID string
	// TLS serves results over TLS with a self-signed certificate whose
	// SHA-256 travels in LabelResultsPin (flint.network.tls.enabled).
	TLS bool
	// Shuffle carries the executor's shuffle settings
	// (shuffleenv.SettingsFromWire reads them; the application's shuffle
	// token among them: never log it); nil, the executor has no shuffle.
	Shuffle *flintpb.ShuffleSettings
	// Job is every flint.* setting of the job, its secrets apart
	// (executor/jobconf); never log its Secrets.
	Job jobconf.Properties
}

// Encode validates s and serializes it for ExecutorInfo.data (tests; the
// fine backend builds the flintpb message itself).
func (s Settings) Encode() ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return flintpb.EncodeSettings(&flintpb.ExecutorSettings{
		TaskCpus: int32(s.TaskCPUs), MaxResultSize: s.MaxResultSize, MaxDirectResultSize: s.MaxDirectResultSize,
		Shuffle: s.Shuffle, JobSettings: s.Job.Settings, JobSecrets: s.Job.Secrets,
		ResultSecret: s.Secret, DriverHost: s.DriverHost, IdleTimeoutNanos: int64(s.IdleTimeout),
		LogLevel: s.LogLevel, LogFormat: s.LogFormat, DriverId: s.DriverID, ResultsTls: s.TLS,
	})
}

// DecodeSettings parses and validates ExecutorInfo.data.
func DecodeSettings(data []byte) (Settings, error) {
	if len(data) == 0 {
		return Settings{}, errors.New("fine: ExecutorInfo.data is empty: this executor must be started by Flint's fine-grained backend")
	}
	m, err := flintpb.DecodeSettings(data)
	if err != nil {
		return Settings{}, fmt.Errorf("fine: ExecutorInfo.data: %w", err)
	}
	s := Settings{
		TaskCPUs: int(m.TaskCpus), MaxResultSize: m.MaxResultSize, MaxDirectResultSize: m.MaxDirectResultSize,
		Secret: m.ResultSecret, DriverHost: m.DriverHost, IdleTimeout: time.Duration(m.IdleTimeoutNanos),
		LogLevel: m.LogLevel, LogFormat: m.LogFormat, DriverID: m.DriverId, TLS: m.ResultsTls,
		Shuffle: m.Shuffle, Job: jobconf.Properties{Settings: m.JobSettings, Secrets: m.JobSecrets},
	}
	return s, s.Validate()
}

// Validate reports every problem of s.
func (s Settings) Validate() error {
	var errs []error
	if s.TaskCPUs < 1 {
		errs = append(errs, fmt.Errorf("fine: task cpus %d must be positive", s.TaskCPUs))
	}
	if s.MaxResultSize < 0 || s.MaxDirectResultSize < 0 {
		errs = append(errs, fmt.Errorf("fine: result limits (%d, %d) must not be negative", s.MaxResultSize, s.MaxDirectResultSize))
	}
	if s.MaxDirectResultSize > contract.MaxInlineResult {
		errs = append(errs, fmt.Errorf("fine: inline result limit %d exceeds %d", s.MaxDirectResultSize, contract.MaxInlineResult))
	}
	if len(s.Secret) < 16 {
		errs = append(errs, errors.New("fine: the result secret must have at least 16 characters"))
	}
	if s.IdleTimeout < 0 {
		errs = append(errs, fmt.Errorf("fine: idle timeout %s must not be negative", s.IdleTimeout))
	}
	return errors.Join(errs...)
}
