package jobconf

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/storage"
)

// Properties are the job's settings as they travel to an executor: plain settings and secret
// ones apart, both by key name.
type Properties struct {
	Settings map[string]string `json:"settings,omitempty"`
	Secrets  map[string]string `json:"secrets,omitempty"`
}

// driverOnly are keys whose values stay with the driver: its credentials, and the executor
// secrets that travel in Mesos Secret protos only.
var driverOnly = map[string]bool{
	"flint.authenticate.secret":          true,
	"flint.mesos.secret":                 true,
	"flint.mesos.secret.file":            true,
	"flint.mesos.executor.secret.values": true,
}

// FromConfig is every effective setting of c an executor receives.
func FromConfig(c *config.Config) Properties {
	p := Properties{Settings: map[string]string{}, Secrets: map[string]string{}}
	for k, v := range c.Effective() {
		switch {
		case driverOnly[k], storage.WithheldFromExecutors(k):
			// Storage credentials reach executors as Mesos secrets (mesosbackend), not here.
		case c.IsSecretKey(k):
			p.Secrets[k] = v
		default:
			p.Settings[k] = v
		}
	}
	return p
}

// Config rebuilds the job's Config from p. Every value is validated by the key table; the
// error names each bad one. Keys the executor's binary does not declare (a newer driver) and
// the driver's credentials are skipped.
func (p Properties) Config() (*config.Config, error) {
	c := config.New()
	all := maps.Clone(p.Settings)
	if all == nil {
		all = map[string]string{}
	}
	maps.Copy(all, p.Secrets)
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(all)) {
		if !config.Declared(k) || driverOnly[k] {
			continue
		}
		if err := c.Set(k, all[k]); err != nil {
			errs = append(errs, fmt.Errorf("jobconf: driver setting: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// LogEffective logs every effective setting of c at debug level, secrets redacted.
func LogEffective(log logrus.FieldLogger, c *config.Config) {
	r := c.Redacted()
	for _, k := range slices.Sorted(maps.Keys(r)) {
		log.WithField("value", r[k]).Debugf("setting %s", k)
	}
}

type ctxKey struct{}

// NewContext returns ctx carrying the job's configuration.
func NewContext(ctx context.Context, c *config.Config) context.Context {
	return context.WithValue(ctx, ctxKey{}, c)
}

// FromContext is the job's configuration carried by ctx, if any.
func FromContext(ctx context.Context) (*config.Config, bool) {
	c, ok := ctx.Value(ctxKey{}).(*config.Config)
	return c, ok && c != nil
}
