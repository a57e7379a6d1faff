package storage

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/flint-mesos/flint/framework/config"
)

// ExecutorSecrets is how a scheme's credentials reach Mesos executors: the configuration
// keys that hold them are withheld from the job's settings sent to executors, and Env turns
// the driver's configuration into environment variables the backends give every executor as
// Mesos Secret protos (mesosbackend's executor secret path, as flint.executorEnv.* secrets) —
// never a plain variable, never a URI, never the job's settings.
type ExecutorSecrets struct {
	// Keys are the configuration keys withheld from executors (the .file variants too: a
	// driver's file need not exist on an agent; the driver reads it and sends the value).
	Keys []string
	// Env is the variables (name to value) executors get; nil or empty when cfg sets no
	// credential. Its errors must not quote a value.
	Env func(cfg *config.Config) (map[string]string, error)
}

var (
	secretsMu sync.RWMutex
	secrets   = map[string]ExecutorSecrets{}
)

// RegisterExecutorSecrets declares scheme's credentials (call it from an init function, as
// Register). Registering a scheme's secrets twice panics.
func RegisterExecutorSecrets(scheme string, s ExecutorSecrets) {
	secretsMu.Lock()
	defer secretsMu.Unlock()
	if _, dup := secrets[scheme]; dup {
		panic("storage: executor secrets of " + scheme + " registered twice")
	}
	secrets[scheme] = s
}

// WithheldFromExecutors reports whether the value of key travels to executors only as a
// Mesos secret (ExecutorSecrets.Keys of a registered scheme), not with the job's settings.
func WithheldFromExecutors(key string) bool {
	secretsMu.RLock()
	defer secretsMu.RUnlock()
	for _, s := range secrets {
		if slices.Contains(s.Keys, key) {
			return true
		}
	}
	return false
}

// ExecutorSecretEnv is every registered scheme's executor variables under cfg, merged; two
// schemes giving one variable different values is an error naming the variable.
func ExecutorSecretEnv(cfg *config.Config) (map[string]string, error) {
	secretsMu.RLock()
	defer secretsMu.RUnlock()
	out := map[string]string{}
	var errs []error
	for _, scheme := range slices.Sorted(maps.Keys(secrets)) {
		s := secrets[scheme]
		if s.Env == nil {
			continue
		}
		env, err := s.Env(cfg)
		if err != nil {
			errs = append(errs, fmt.Errorf("storage: %s credentials for executors: %w", scheme, err))
			continue
		}
		for k, v := range env {
			if old, ok := out[k]; ok && old != v {
				errs = append(errs, fmt.Errorf("storage: executor variable %s is given two values (schemes' credentials disagree)", k))
			}
			out[k] = v
		}
	}
	return out, errors.Join(errs...)
}
