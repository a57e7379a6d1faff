package shuffleenv

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/config/shuffleconf"
	"github.com/flint-mesos/flint/shuffle/shuffleblock"
)

// Properties an executor's launch settings carry for its shuffle: the
// driver's side names them (framework/config/shuffleconf).
const (
	PropAppID            = shuffleconf.PropAppID
	PropToken            = shuffleconf.PropToken
	PropTLS              = shuffleconf.PropTLS
	PropLocalDir         = shuffleconf.PropLocalDir
	PropMemory           = shuffleconf.PropMemory
	PropCompression      = shuffleconf.PropCompression
	PropMaxBytesInFlight = shuffleconf.PropMaxBytesInFlight
	PropMaxReqsInFlight  = shuffleconf.PropMaxReqsInFlight
	PropMaxRetries       = shuffleconf.PropMaxRetries
	PropRetryWait        = shuffleconf.PropRetryWait
	PropTimeout          = shuffleconf.PropTimeout
	PropServiceDir       = shuffleconf.PropServiceDir
)

// Properties are s as launch properties (sizes in bytes, durations in
// Go's notation); the executor's identity and host are its own.
func (s Settings) Properties() map[string]string {
	p := map[string]string{
		PropAppID: s.AppID, PropToken: s.Token, PropTLS: strconv.FormatBool(s.TLS), PropLocalDir: s.LocalDir,
		PropMemory: strconv.FormatInt(s.Memory, 10), PropCompression: s.Compression.String(),
		PropMaxBytesInFlight: strconv.FormatInt(s.MaxBytesInFlight, 10), PropMaxReqsInFlight: strconv.Itoa(s.MaxReqsInFlight),
		PropMaxRetries: strconv.Itoa(s.MaxRetries), PropRetryWait: s.RetryWait.String(), PropTimeout: s.Timeout.String(),
	}
	if s.ServiceDir != "" {
		p[PropServiceDir] = s.ServiceDir
	}
	return p
}

// SettingsFromProperties reads Properties back for executor executorID on
// host. ok is false when the properties carry no shuffle (a driver that
// runs no multi-stage jobs, or an older one): the executor then has none.
func SettingsFromProperties(props map[string]string, executorID, host string) (s Settings, ok bool, err error) {
	if props[PropAppID] == "" {
		return Settings{}, false, nil
	}
	s = Settings{AppID: props[PropAppID], Token: props[PropToken], ExecutorID: executorID, Host: host, LocalDir: props[PropLocalDir],
		ServiceDir: props[PropServiceDir]}
	var errs []error
	get := func(key string, parse func(string) error) {
		if v, present := props[key]; present && v != "" {
			if err := parse(v); err != nil {
				errs = append(errs, fmt.Errorf("shuffleenv: property %s=%q: %w", key, v, err))
			}
		}
	}
	get(PropTLS, func(v string) (err error) { s.TLS, err = strconv.ParseBool(v); return })
	get(PropMemory, func(v string) (err error) { s.Memory, err = strconv.ParseInt(v, 10, 64); return })
	get(PropCompression, func(v string) (err error) { s.Compression, err = shuffleblock.ParseCompression(v); return })
	get(PropMaxBytesInFlight, func(v string) (err error) { s.MaxBytesInFlight, err = strconv.ParseInt(v, 10, 64); return })
	get(PropMaxReqsInFlight, func(v string) (err error) { s.MaxReqsInFlight, err = strconv.Atoi(v); return })
	get(PropMaxRetries, func(v string) (err error) { s.MaxRetries, err = strconv.Atoi(v); return })
	get(PropRetryWait, func(v string) (err error) { s.RetryWait, err = time.ParseDuration(v); return })
	get(PropTimeout, func(v string) (err error) { s.Timeout, err = time.ParseDuration(v); return })
	if s.Token == "" {
		errs = append(errs, errors.New("shuffleenv: the shuffle properties carry no token"))
	}
	if s.Memory <= 0 {
		errs = append(errs, fmt.Errorf("shuffleenv: shuffle memory %d must be positive", s.Memory))
	}
	if err := errors.Join(errs...); err != nil {
		return Settings{}, true, err
	}
	return s, true, nil
}

// DriverProperties are the shuffle properties a backend sends its
// executors (shuffleconf.DriverProperties, which the backends call).
func DriverProperties(c *config.Config, secret string) (map[string]string, error) {
	return shuffleconf.DriverProperties(c, secret)
}
