package shuffleenv

import (
	"errors"
	"fmt"
	"time"

	"github.com/flint-mesos/flint/framework/config/shuffleconf"
	"github.com/flint-mesos/flint/proto/flintpb"
)

// Wire is s as the driver sends it (flintpb.ExecutorSettings.shuffle):
// what every executor of the application shares, without the executor's
// identity and host. The driver builds it from its configuration
// (shuffleconf.DriverSettings); Wire serves tests and tools that start
// an executor with given settings.
func (s Settings) Wire() *flintpb.ShuffleSettings {
	return &flintpb.ShuffleSettings{
		AppId: s.AppID, Token: s.Token, Tls: s.TLS, LocalDir: s.LocalDir, MemoryBytes: s.Memory,
		Codec: shuffleconf.Codec(s.Compression), MaxBytesInFlight: s.MaxBytesInFlight,
		MaxReqsInFlight: int32(s.MaxReqsInFlight), MaxRetries: int32(s.MaxRetries),
		RetryWaitNanos: int64(s.RetryWait), ConnectionTimeoutNanos: int64(s.Timeout), ServiceDir: s.ServiceDir,
	}
}

// SettingsFromWire reads the driver's shuffle settings for executor
// executorID on host: the one place an executor (coarse or fine) reads
// them. ok is false when m is nil or names no application (a driver that
// runs no multi-stage jobs): the executor then has no shuffle.
func SettingsFromWire(m *flintpb.ShuffleSettings, executorID, host string) (s Settings, ok bool, err error) {
	if m.GetAppId() == "" {
		return Settings{}, false, nil
	}
	s = Settings{AppID: m.AppId, Token: m.Token, ExecutorID: executorID, Host: host, TLS: m.Tls, LocalDir: m.LocalDir,
		Memory: m.MemoryBytes, MaxBytesInFlight: m.MaxBytesInFlight, MaxReqsInFlight: int(m.MaxReqsInFlight),
		MaxRetries: int(m.MaxRetries), RetryWait: time.Duration(m.RetryWaitNanos), Timeout: time.Duration(m.ConnectionTimeoutNanos),
		ServiceDir: m.ServiceDir}
	var errs []error
	if s.Compression, err = shuffleconf.Compression(m.Codec); err != nil {
		errs = append(errs, err)
	}
	if s.Token == "" {
		errs = append(errs, errors.New("shuffleenv: the shuffle settings carry no token"))
	}
	if s.Memory <= 0 {
		errs = append(errs, fmt.Errorf("shuffleenv: shuffle memory %d must be positive", s.Memory))
	}
	if err := errors.Join(errs...); err != nil {
		return Settings{}, true, err
	}
	return s, true, nil
}
