package fine

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Role is the FLINT_ROLE value that makes a Flint binary a fine-grained
// Mesos executor; the root package registers Main under it.
const Role = "fine-executor"

// LabelResults is the TaskStatus label holding the base URL of the
// executor's result server on updates whose result the executor kept.
const LabelResults = "flint.results"

// LabelResultsPin is the TaskStatus label holding the SHA-256 of the result
// server's self-signed certificate when it serves TLS (Settings.TLS); the
// driver accepts only that certificate (framework/tlspin).
const LabelResultsPin = "flint.results.sha256"

// MaxInlineResult caps the result sent inside a status update: the update
// travels agent → master → driver in one RecordIO record of the scheduler
// stream, which mesos-go limits to 4 MiB.
const MaxInlineResult = 2 << 20

// SettingsVersion is the version of the Settings format.
const SettingsVersion = 1

// Settings is what the driver hands every executor in ExecutorInfo.data
// (JSON). It holds the result-server secret: never log it.
type Settings struct {
	Version int `json:"version"`
	// TaskCPUs is flint.task.cpus, for descriptions that carry no cpus.
	TaskCPUs int `json:"task_cpus"`
	// MaxResultSize is flint.driver.maxResultSize (0: unlimited).
	MaxResultSize int64 `json:"max_result_size"`
	// MaxDirectResultSize is the largest inline result (at most MaxInlineResult).
	MaxDirectResultSize int64 `json:"max_direct_result_size"`
	// Secret authenticates the driver to the result server.
	Secret string `json:"secret"`
	// DriverHost is the driver's host; the result server listens on the
	// local address that routes to it.
	DriverHost string `json:"driver_host"`
	// IdleTimeout ends the executor after this long without tasks (0: never).
	IdleTimeout time.Duration `json:"idle_timeout"`
	// LogLevel and LogFormat are flint.log.level and flint.log.format.
	LogLevel  string `json:"log_level,omitempty"`
	LogFormat string `json:"log_format,omitempty"`
	// DriverID names the driver (the Mesos framework id) in logs.
	DriverID string `json:"driver_id,omitempty"`
	// TLS serves results over TLS with a self-signed certificate whose
	// SHA-256 travels in LabelResultsPin (flint.network.tls.enabled).
	TLS bool `json:"tls,omitempty"`
}

// Encode serializes s for ExecutorInfo.data.
func (s Settings) Encode() ([]byte, error) {
	s.Version = SettingsVersion
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return json.Marshal(s)
}

// DecodeSettings parses and validates ExecutorInfo.data.
func DecodeSettings(data []byte) (Settings, error) {
	var s Settings
	if len(data) == 0 {
		return s, errors.New("fine: ExecutorInfo.data is empty: this executor must be started by Flint's fine-grained backend")
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("fine: ExecutorInfo.data: %w", err)
	}
	if s.Version != SettingsVersion {
		return s, fmt.Errorf("fine: ExecutorInfo.data has settings version %d, this executor understands %d (driver and executor binaries differ)", s.Version, SettingsVersion)
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
	if s.MaxDirectResultSize > MaxInlineResult {
		errs = append(errs, fmt.Errorf("fine: inline result limit %d exceeds %d", s.MaxDirectResultSize, MaxInlineResult))
	}
	if len(s.Secret) < 16 {
		errs = append(errs, errors.New("fine: the result secret must have at least 16 characters"))
	}
	if s.IdleTimeout < 0 {
		errs = append(errs, fmt.Errorf("fine: idle timeout %s must not be negative", s.IdleTimeout))
	}
	return errors.Join(errs...)
}
