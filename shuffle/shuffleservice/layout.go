package shuffleservice

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/flint-mesos/flint/shuffle/shuffleserver"
)

// InfoFile is the file in the service's directory that says where it
// listens.
const InfoFile = "service.json"

// tokenFile holds the SHA-256 of an application's shuffle token, hex.
const tokenFile = "token.sha256"

// ErrNotRunning is wrapped when no service has written its InfoFile in
// the directory.
var ErrNotRunning = errors.New("no shuffle service runs on this agent")

// ErrOtherToken is wrapped when an application is already registered
// with another token.
var ErrOtherToken = errors.New("the application is registered with another shuffle token")

type info struct {
	Address string `json:"address"`
}

// unsafe are the characters an id cannot bring into a path.
var unsafe = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safe(id string) string {
	s := unsafe.ReplaceAllString(id, "_")
	if s == "" || s == "." || s == ".." {
		s = "_" + s
	}
	return s
}

// AppsDir holds one directory per registered application.
func AppsDir(dir string) string { return filepath.Join(dir, "apps") }

// AppDir is application app's directory under the service's dir.
func AppDir(dir, app string) string { return filepath.Join(AppsDir(dir), safe(app)) }

// StoreRoot is where executor exec of application app keeps its shuffle
// store.
func StoreRoot(dir, app, exec string) string { return filepath.Join(AppDir(dir, app), safe(exec)) }

// NamespaceRoot is where a dataset run's namespace ns of that executor's
// store lives (the executor's own layout: <root>/ns/<ns>).
func NamespaceRoot(dir, app, exec, ns string) string {
	return filepath.Join(StoreRoot(dir, app, exec), "ns", safe(ns))
}

// ReadInfo reads the address of the service running with directory dir.
func ReadInfo(dir string) (shuffleserver.Address, error) {
	b, err := os.ReadFile(filepath.Join(dir, InfoFile))
	if errors.Is(err, fs.ErrNotExist) {
		return shuffleserver.Address{}, fmt.Errorf("shuffleservice: %w: %s is missing (start `flint shuffle-service --dir %s` on every agent, or unset flint.shuffle.service.enabled)", ErrNotRunning, filepath.Join(dir, InfoFile), dir)
	}
	if err != nil {
		return shuffleserver.Address{}, fmt.Errorf("shuffleservice: %w", err)
	}
	var in info
	if err := json.Unmarshal(b, &in); err != nil {
		return shuffleserver.Address{}, fmt.Errorf("shuffleservice: %s: %w", filepath.Join(dir, InfoFile), err)
	}
	a, err := shuffleserver.ParseAddress(in.Address)
	if err != nil {
		return shuffleserver.Address{}, fmt.Errorf("shuffleservice: %s: %w", filepath.Join(dir, InfoFile), err)
	}
	return a, nil
}

func writeInfo(dir string, a shuffleserver.Address) error {
	b, err := json.Marshal(info{Address: a.String()})
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, InfoFile), b, 0o644)
}

func tokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return []byte(hex.EncodeToString(h[:]))
}

// Register registers application app with the service in dir under its
// shuffle token (an executor does it before it writes its first map
// output; every executor of the application may): the first registration
// creates the application's directory, later ones must bring the same
// token.
func Register(dir, app, token string) error {
	if token == "" {
		return errors.New("shuffleservice: registering needs the application's shuffle token")
	}
	if _, err := ReadInfo(dir); err != nil {
		return err
	}
	ad := AppDir(dir, app)
	if err := os.Mkdir(ad, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("shuffleservice: register %s: %w", app, err)
	}
	want := tokenHash(token)
	have, err := os.ReadFile(filepath.Join(ad, tokenFile))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return writeAtomic(filepath.Join(ad, tokenFile), want, 0o600)
	case err != nil:
		return fmt.Errorf("shuffleservice: register %s: %w", app, err)
	case !bytes.Equal(have, want):
		return fmt.Errorf("shuffleservice: register %s: %w", app, ErrOtherToken)
	}
	return nil
}

// writeAtomic writes data to path through a temporary file in its
// directory, so a reader sees the old content or the new, never a part.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("shuffleservice: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("shuffleservice: write %s: %w", path, err)
	}
	return nil
}
