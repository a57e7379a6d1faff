package containerizer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// ErrSecretReference is why a REFERENCE secret fails a launch: as a Mesos
// agent without a secret resolver module (its default resolver), minimesos
// resolves VALUE secrets only.
var ErrSecretReference = errors.New("secret references need a secret resolver module; this agent resolves value secrets only")

// secrets are what a launch's Mesos secrets resolve to: environment
// variables and files in the sandbox (sandbox-relative path → content).
type secrets struct {
	env   map[string]string
	files map[string][]byte
}

// resolveSecrets resolves the SECRET variables of env and the SECRET
// volumes of container with r (nil: DefaultSecretResolver, which resolves
// VALUE secrets and fails REFERENCE ones with ErrSecretReference).
// A secret volume becomes a file at its container_path, which must be
// relative and stay inside the sandbox (there is no container image to
// mount into). Values never appear in the errors.
func resolveSecrets(r SecretResolver, env *mesos.Environment, container *mesos.ContainerInfo) (secrets, error) {
	if r == nil {
		r = DefaultSecretResolver{}
	}
	var s secrets
	var errs []error
	if env != nil {
		for _, v := range env.Variables {
			if v.GetType() != mesos.Environment_Variable_SECRET {
				continue
			}
			data, err := resolve(r, v.Secret)
			if err != nil {
				errs = append(errs, fmt.Errorf("environment variable %s: %w", v.Name, err))
				continue
			}
			if s.env == nil {
				s.env = map[string]string{}
			}
			s.env[v.Name] = string(data)
		}
	}
	if container != nil {
		for _, vol := range container.Volumes {
			src := vol.GetSource()
			if src == nil || src.GetType() != mesos.Volume_Source_SECRET {
				continue
			}
			p := vol.ContainerPath
			data, err := resolve(r, src.Secret)
			if err == nil {
				err = sandboxRelative(p)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("secret volume %q: %w", p, err))
				continue
			}
			if s.files == nil {
				s.files = map[string][]byte{}
			}
			s.files[filepath.Clean(p)] = data
		}
	}
	return s, errors.Join(errs...)
}

func resolve(r SecretResolver, sec *mesos.Secret) ([]byte, error) {
	if sec == nil {
		return nil, errors.New("no secret given")
	}
	return r.Resolve(sec)
}

// secretValue is a VALUE secret's data.
func secretValue(sec *mesos.Secret) ([]byte, error) {
	switch {
	case sec == nil:
		return nil, errors.New("no secret given")
	case sec.GetType() == mesos.Secret_VALUE && sec.Value != nil:
		return sec.Value.Data, nil
	}
	return nil, fmt.Errorf("secret of type %v without its value", sec.GetType())
}

func sandboxRelative(p string) error {
	c := filepath.Clean(p)
	if p == "" || filepath.IsAbs(p) || c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return errors.New("the container path must be relative to the sandbox and stay inside it")
	}
	return nil
}

// writeSecretFiles writes files into sandbox, readable by the owner only
// (Launch then hands the sandbox to the run-as user).
func writeSecretFiles(sandbox string, files map[string][]byte) error {
	if len(files) == 0 {
		return nil
	}
	root, err := os.OpenRoot(sandbox)
	if err != nil {
		return err
	}
	defer root.Close()
	for p, data := range files {
		if dir := filepath.Dir(p); dir != "." {
			if err := root.MkdirAll(dir, 0o700); err != nil {
				return fmt.Errorf("secret file %q: %w", p, err)
			}
		}
		f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o400)
		if err != nil {
			return fmt.Errorf("secret file %q: %w", p, err)
		}
		_, werr := f.Write(data)
		if err := errors.Join(werr, f.Close()); err != nil {
			return fmt.Errorf("secret file %q: %w", p, err)
		}
	}
	return nil
}

// withSecretEnv is env ("K=V") with the secret variables set, replacing
// plain ones of the same name.
func withSecretEnv(env []string, sec map[string]string) []string {
	if len(sec) == 0 {
		return env
	}
	out := make([]string, 0, len(env)+len(sec))
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); !hasKey(sec, k) {
			out = append(out, kv)
		}
	}
	for k, v := range sec {
		out = append(out, k+"="+v)
	}
	return out
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }
