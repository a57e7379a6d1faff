package mesosbackend

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/storage"
)

// ExecutorSecret is one secret every executor gets (flint.mesos.executor.secret.*, Spark's
// spark.mesos.executor.secret.*): a Mesos Secret, exposed in an environment variable, a file
// in the sandbox, or both.
type ExecutorSecret struct {
	Secret  mesos.Secret
	EnvKey  string // "" = not in the environment
	File    string // sandbox-relative; "" = no file
	logName string // how errors and logs name it (a reference's name, or "value #i")
}

func splitList(s string) []string {
	var out []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// readSecrets reads flint.mesos.executor.secret.*, the flint.executorEnv.* entries
// flint.redaction.regex marks secret (moved from env into the returned map) and the storage
// schemes' credentials (storage.ExecutorSecretEnv: flint.s3.accessKey… as AWS_ACCESS_KEY_ID…,
// which win over a flint.executorEnv entry of the same name). Errors never quote a secret value.
func readSecrets(cfg *config.Config, env map[string]string) (secretEnv map[string]string, secrets []ExecutorSecret, errs []error) {
	storeEnv, err := storage.ExecutorSecretEnv(cfg)
	if err != nil {
		errs = append(errs, err)
	}
	for name, v := range storeEnv {
		if secretEnv == nil {
			secretEnv = map[string]string{}
		}
		secretEnv[name] = v
		delete(env, name)
	}
	for name, v := range env {
		if cfg.IsSecretKey("flint.executorEnv." + name) {
			if secretEnv == nil {
				secretEnv = map[string]string{}
			}
			secretEnv[name] = v
			delete(env, name)
		}
	}
	names := splitList(cfg.String("flint.mesos.executor.secret.names"))
	values := splitList(cfg.String("flint.mesos.executor.secret.values"))
	envKeys := splitList(cfg.String("flint.mesos.executor.secret.envkeys"))
	files := splitList(cfg.String("flint.mesos.executor.secret.filenames"))
	n := max(len(names), len(values))
	switch {
	case len(names) > 0 && len(values) > 0:
		return secretEnv, nil, append(errs, fmt.Errorf("flint.mesos.executor.secret.names and .values are exclusive (references or values, as in Spark)"))
	case n == 0:
		if len(envKeys)+len(files) > 0 {
			errs = append(errs, fmt.Errorf("flint.mesos.executor.secret.envkeys/.filenames are set but neither .names nor .values"))
		}
		return secretEnv, nil, errs
	case len(envKeys) == 0 && len(files) == 0:
		errs = append(errs, fmt.Errorf("flint.mesos.executor.secret: %d secrets but neither .envkeys nor .filenames say where executors get them", n))
	case len(envKeys) > 0 && len(envKeys) != n:
		errs = append(errs, fmt.Errorf("flint.mesos.executor.secret.envkeys names %d variables for %d secrets", len(envKeys), n))
	case len(files) > 0 && len(files) != n:
		errs = append(errs, fmt.Errorf("flint.mesos.executor.secret.filenames names %d files for %d secrets", len(files), n))
	}
	for _, f := range files {
		if c := filepath.Clean(f); filepath.IsAbs(f) || c == "." || c == ".." || strings.HasPrefix(c, "../") {
			errs = append(errs, fmt.Errorf("flint.mesos.executor.secret.filenames: %q must be a path inside the sandbox (relative, no ..)", f))
		}
	}
	if len(errs) > 0 {
		return secretEnv, nil, errs
	}
	for i := 0; i < n; i++ {
		var s ExecutorSecret
		if len(names) > 0 {
			s.Secret = mesos.Secret{Type: mesos.Secret_REFERENCE, Reference: &mesos.Secret_Reference{Name: names[i]}}
			s.logName = fmt.Sprintf("reference %q", names[i])
		} else {
			s.Secret = mesos.Secret{Type: mesos.Secret_VALUE, Value: &mesos.Secret_Value{Data: []byte(values[i])}}
			s.logName = fmt.Sprintf("value #%d", i+1)
		}
		if len(envKeys) > 0 {
			s.EnvKey = envKeys[i]
		}
		if len(files) > 0 {
			s.File = files[i]
		}
		secrets = append(secrets, s)
	}
	return secretEnv, secrets, nil
}

// Environment is an executor's Mesos environment: plain variables as values, then the
// secret ones (flint.executorEnv.* entries flint.redaction.regex marks, and the
// .envkeys of flint.mesos.executor.secret.*) as variables of type SECRET holding a Mesos
// Secret, never a plain value. A plain variable of a secret's name is dropped. Sorted by
// name, so every launch of an executor describes it identically.
func (e Executor) Environment(plain map[string]string) []mesos.Environment_Variable {
	secret := map[string]mesos.Secret{}
	for k, v := range e.SecretEnv {
		secret[k] = mesos.Secret{Type: mesos.Secret_VALUE, Value: &mesos.Secret_Value{Data: []byte(v)}}
	}
	for _, s := range e.Secrets {
		if s.EnvKey != "" {
			secret[s.EnvKey] = s.Secret
		}
	}
	keys := make([]string, 0, len(plain)+len(secret))
	for k := range plain {
		if _, ok := secret[k]; !ok {
			keys = append(keys, k)
		}
	}
	for k := range secret {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	vars := make([]mesos.Environment_Variable, 0, len(keys))
	for _, k := range keys {
		if s, ok := secret[k]; ok {
			t := mesos.Environment_Variable_SECRET
			vars = append(vars, mesos.Environment_Variable{Name: k, Type: &t, Secret: &s})
			continue
		}
		v := plain[k]
		vars = append(vars, mesos.Environment_Variable{Name: k, Value: &v})
	}
	return vars
}

// SecretsLog describes the executor secrets for a log line, without any value.
func (e Executor) SecretsLog() string {
	var parts []string
	for k := range e.SecretEnv {
		parts = append(parts, "env "+k+" (flint.executorEnv, secret)")
	}
	for _, s := range e.Secrets {
		where := []string{}
		if s.EnvKey != "" {
			where = append(where, "env "+s.EnvKey)
		}
		if s.File != "" {
			where = append(where, "file "+s.File)
		}
		parts = append(parts, s.logName+" as "+strings.Join(where, " and "))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// TaskUser is the user tasks run as and see in FLINT_USER: flint.proxyUser when set, else
// the framework's user.
func (e Executor) TaskUser(frameworkUser string) string {
	if e.ProxyUser != "" {
		return e.ProxyUser
	}
	return frameworkUser
}

// RunAs sets cmd's user to flint.proxyUser when set (CommandInfo.user, which the master
// authorizes); otherwise executors run as the framework's user.
func (e Executor) RunAs(cmd *mesos.CommandInfo) *mesos.CommandInfo {
	if e.ProxyUser != "" {
		u := e.ProxyUser
		cmd.User = &u
	}
	return cmd
}

// Unauthorized words a launch the master refused because its authorizer does not let the
// framework's principal run tasks as user (Mesos' TASK_ERROR with REASON_TASK_UNAUTHORIZED,
// from the run_tasks ACL), or returns "". No launch can succeed while the ACL stands, so the
// backends fail the jobs at once.
func Unauthorized(st mesos.TaskStatus, user string) string {
	if st.GetReason() != mesos.REASON_TASK_UNAUTHORIZED {
		return ""
	}
	return fmt.Sprintf("the Mesos master refused to run the executors as user %q (flint.proxyUser, else flint.mesos.user): %s; "+
		"its ACLs (run_tasks) must allow the framework's principal (flint.mesos.principal) to run tasks as that user", user, st.GetMessage())
}
