package flintpb

import (
	"errors"
	"fmt"
)

// SettingsVersion is the ExecutorSettings version this build's
// drivers send and its executors accept.
const SettingsVersion = 3

// EncodeSettings stamps s with SettingsVersion and serializes it for a
// fine executor's ExecutorInfo.data.
func EncodeSettings(s *ExecutorSettings) ([]byte, error) {
	s.Version = SettingsVersion
	data, err := s.Marshal()
	if err != nil {
		return nil, fmt.Errorf("flintpb: encode executor settings: %w", err)
	}
	return data, nil
}

// DecodeSettings parses what EncodeSettings wrote and checks its version.
func DecodeSettings(data []byte) (*ExecutorSettings, error) {
	if len(data) == 0 {
		return nil, errors.New("flintpb: no executor settings: this executor must be started by a Flint driver")
	}
	s := &ExecutorSettings{}
	if err := s.Unmarshal(data); err != nil {
		return nil, fmt.Errorf("flintpb: executor settings: %w", err)
	}
	return s, CheckSettingsVersion(s)
}

// CheckSettingsVersion fails unless s is a SettingsVersion message (a nil s is
// missing: the driver's binary predates typed settings).
func CheckSettingsVersion(s *ExecutorSettings) error {
	if s == nil {
		return errors.New("flintpb: the driver sent no executor settings (driver and executor binaries differ)")
	}
	if s.Version != SettingsVersion {
		return fmt.Errorf("flintpb: executor settings version %d, this executor understands %d (driver and executor binaries differ)", s.Version, SettingsVersion)
	}
	return nil
}
