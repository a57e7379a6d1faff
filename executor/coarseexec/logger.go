package coarseexec

import (
	"fmt"
	"os"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/logging"
)

// newLogger logs to stderr with the secret redacted.
func newLogger(level, format, secret string) (*logrus.Logger, error) {
	l, err := logging.New(logging.Options{Level: level, Format: format, Out: os.Stderr, Secrets: []string{secret}})
	if err != nil {
		return nil, fmt.Errorf("coarse: %s/%s: %w", contract.EnvLogLevel, contract.EnvLogFormat, err)
	}
	return l, nil
}
