package dispatcher

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Store keeps the dispatcher's state across restarts: its framework id and one
// record per driver. Save must be durable when it returns.
type Store interface {
	Save(r Record) error
	LoadAll() ([]Record, error)
	SaveFrameworkID(id string) error
	FrameworkID() (string, error)
}

// DirStore is a Store in a local directory: drivers/<id>.json per record and
// framework-id, each written atomically (a temporary file, fsync, rename, fsync of
// the directory), so a crash leaves the old or the new version, never a torn one.
type DirStore struct{ dir string }

// NewDirStore creates dir (and drivers/ in it) when missing.
func NewDirStore(dir string) (*DirStore, error) {
	if err := os.MkdirAll(filepath.Join(dir, "drivers"), 0o700); err != nil {
		return nil, fmt.Errorf("dispatcher: store: %w", err)
	}
	return &DirStore{dir: dir}, nil
}

// Dir is the store's directory.
func (s *DirStore) Dir() string { return s.dir }

// Save writes r.
func (s *DirStore) Save(r Record) error {
	if !idRE.MatchString(r.ID) {
		return fmt.Errorf("dispatcher: store: bad id %q", r.ID)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("dispatcher: store: %w", err)
	}
	if err := writeAtomic(filepath.Join(s.dir, "drivers", r.ID+".json"), b, 0o600); err != nil {
		return fmt.Errorf("dispatcher: store %s: %w", r.ID, err)
	}
	return nil
}

// LoadAll reads every record, in submission order.
func (s *DirStore) LoadAll() ([]Record, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, "drivers"))
	if err != nil {
		return nil, fmt.Errorf("dispatcher: store: %w", err)
	}
	var out []Record
	var errs []error
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue // a temporary file a crash left
		}
		b, err := os.ReadFile(filepath.Join(s.dir, "drivers", e.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var r Record
		if err := json.Unmarshal(b, &r); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", e.Name(), err))
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	if err := errors.Join(errs...); err != nil {
		return out, fmt.Errorf("dispatcher: store: %w", err)
	}
	return out, nil
}

// SaveFrameworkID records the dispatcher's Mesos framework id.
func (s *DirStore) SaveFrameworkID(id string) error {
	if err := writeAtomic(filepath.Join(s.dir, "framework-id"), []byte(id+"\n"), 0o600); err != nil {
		return fmt.Errorf("dispatcher: store: %w", err)
	}
	return nil
}

// FrameworkID returns the recorded framework id, or "".
func (s *DirStore) FrameworkID() (string, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, "framework-id"))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("dispatcher: store: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// writeAtomic replaces path with data: a temporary file in the same directory,
// synced, renamed over path, and the directory synced.
func writeAtomic(path string, data []byte, mode os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	ok = true
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
