package containerizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// SecretResolver turns a Mesos Secret into its data, as the secret
// resolver of a Mesos agent does (include/mesos/secret/resolver.hpp): the
// agent calls it for every secret of a launch — SECRET environment
// variables and SECRET volumes — and a secret it cannot resolve fails the
// launch. Errors must not contain secret values.
type SecretResolver interface {
	Resolve(sec *mesos.Secret) ([]byte, error)
}

// DefaultSecretResolver is a Mesos agent's default resolver (no
// --secret_resolver module): a VALUE secret is its data, a REFERENCE fails
// with ErrSecretReference.
type DefaultSecretResolver struct{}

// Resolve implements SecretResolver.
func (DefaultSecretResolver) Resolve(sec *mesos.Secret) ([]byte, error) {
	if sec.GetType() == mesos.Secret_REFERENCE || sec.GetReference() != nil {
		return nil, fmt.Errorf("%w (reference %q)", ErrSecretReference, sec.GetReference().GetName())
	}
	return secretValue(sec)
}

// ErrNoSuchSecret: a reference names no secret of the store.
var ErrNoSuchSecret = errors.New("no such secret in the agent's secret store")

// DirSecretResolver is a file-backed secret store in the role of a Mesos
// agent's secret resolver module (minimesos --secrets-dir): a REFERENCE
// secret named "/a/b" is the file a/b below Dir — the whole file, or, with
// a key, the string value of that key in the file's JSON object (as Mesos'
// docs describe a secret holding key/value pairs). VALUE secrets resolve as
// the default resolver does. Names never leave Dir (no "..", no symlink out).
type DirSecretResolver struct {
	Dir string
}

// Resolve implements SecretResolver.
func (r DirSecretResolver) Resolve(sec *mesos.Secret) ([]byte, error) {
	ref := sec.GetReference()
	if sec.GetType() != mesos.Secret_REFERENCE && ref == nil {
		return secretValue(sec)
	}
	if sec.GetType() != mesos.Secret_REFERENCE || sec.Value != nil || ref == nil || ref.Name == "" {
		return nil, fmt.Errorf("a REFERENCE secret needs a reference name and no value (type %v)", sec.GetType())
	}
	data, err := r.read(ref.Name)
	if err != nil || ref.Key == nil {
		return data, err
	}
	var fields map[string]any
	if json.Unmarshal(data, &fields) != nil {
		return nil, fmt.Errorf("secret %q: key %q given, but the secret is not a JSON object", ref.Name, *ref.Key)
	}
	v, ok := fields[*ref.Key].(string)
	if !ok {
		return nil, fmt.Errorf("%w: secret %q has no string key %q", ErrNoSuchSecret, ref.Name, *ref.Key)
	}
	return []byte(v), nil
}

func (r DirSecretResolver) read(name string) ([]byte, error) {
	rel := filepath.Clean(strings.TrimLeft(name, "/"))
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil, fmt.Errorf("secret reference %q: not a name inside the secret store", name)
	}
	root, err := os.OpenRoot(r.Dir)
	if err != nil {
		return nil, fmt.Errorf("secret store: %w", err)
	}
	defer root.Close()
	f, err := root.Open(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %q", ErrNoSuchSecret, name)
	case err != nil:
		return nil, fmt.Errorf("secret reference %q: %w", name, err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %q (not a file)", ErrNoSuchSecret, name)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("secret reference %q: %w", name, err)
	}
	return data, nil
}
