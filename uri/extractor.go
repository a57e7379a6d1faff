package uri

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// extractor writes archive entries beneath root, enforcing the rules
// documented on Extract. All writes go through an os.Root, so even a missed
// check cannot make the kernel write outside the destination; the checks
// here additionally keep escaping links out of the sandbox.
type extractor struct {
	root    *os.Root
	limits  Limits
	bytes   int64
	entries int
	created []string        // paths created, in order (removed on failure)
	regular map[string]bool // regular files from this archive (hard link targets)
	dirs    []dirMode       // modes applied once all entries are written
}

type dirMode struct {
	name string
	mode fs.FileMode
}

func unsafeEntry(name, why string) error {
	return fmt.Errorf("%w: entry %q: %s", ErrUnsafeArchive, name, why)
}

// count charges one entry against MaxFiles.
func (x *extractor) count(name string) error {
	x.entries++
	if x.entries > x.limits.MaxFiles {
		return fmt.Errorf("%w: entry %q: more than %d entries", ErrTooLarge, name, x.limits.MaxFiles)
	}
	return nil
}

// cleanName validates an entry name and returns it cleaned, "." for the
// destination itself.
func cleanName(name string) (string, error) {
	switch {
	case strings.ContainsAny(name, "\x00\\"):
		return "", unsafeEntry(name, "NUL or backslash in name")
	case strings.HasPrefix(name, "/"):
		return "", unsafeEntry(name, "absolute path")
	}
	trimmed := strings.TrimRight(name, "/")
	if trimmed == "" || trimmed == "." {
		return ".", nil
	}
	if slices.Contains(strings.Split(trimmed, "/"), "..") || !filepath.IsLocal(trimmed) {
		return "", unsafeEntry(name, "path leaves the destination")
	}
	return filepath.Clean(trimmed), nil
}

// ensureDir makes sure every element of dir is a real directory, creating
// missing ones; a symlink anywhere on the way is refused.
func (x *extractor) ensureDir(entry, dir string) error {
	if dir == "." {
		return nil
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		p := strings.Join(parts[:i+1], "/")
		fi, err := x.root.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if err := x.root.Mkdir(p, 0o755); err != nil {
				return err
			}
			x.created = append(x.created, p)
		case err != nil:
			return err
		case fi.Mode()&fs.ModeSymlink != 0:
			return unsafeEntry(entry, "path goes through symlink "+p)
		case !fi.IsDir():
			return fmt.Errorf("entry %q: %s is not a directory", entry, p)
		}
	}
	return nil
}

// prepare validates name, creates its parent directories and removes a
// non-directory already at name (as tar does). It returns the clean name.
func (x *extractor) prepare(name string) (string, error) {
	clean, err := cleanName(name)
	if err != nil {
		return "", err
	}
	if err := x.count(name); err != nil {
		return "", err
	}
	if clean == "." {
		return "", unsafeEntry(name, "names the destination itself")
	}
	if err := x.ensureDir(name, filepath.Dir(clean)); err != nil {
		return "", err
	}
	fi, err := x.root.Lstat(clean)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", err
	case fi.IsDir():
		return "", fmt.Errorf("entry %q: a directory is in the way", name)
	default:
		if err := x.root.Remove(clean); err != nil {
			return "", err
		}
	}
	delete(x.regular, clean)
	return clean, nil
}

func (x *extractor) dir(name string, mode fs.FileMode) error {
	clean, err := cleanName(name)
	if err != nil {
		return err
	}
	if err := x.count(name); err != nil {
		return err
	}
	if clean == "." {
		return nil
	}
	n := len(x.created)
	if err := x.ensureDir(name, clean); err != nil {
		return err
	}
	if len(x.created) > n && x.created[len(x.created)-1] == clean {
		x.dirs = append(x.dirs, dirMode{clean, mode.Perm() | 0o700})
	}
	return nil
}

// writeFile writes a regular file from r; size is the size the archive
// claims (-1 if unknown), checked early against MaxBytes.
func (x *extractor) writeFile(name string, r io.Reader, mode fs.FileMode, size int64) error {
	left := x.limits.MaxBytes - x.bytes
	if size > left {
		return fmt.Errorf("%w: entry %q: archive expands beyond %d bytes", ErrTooLarge, name, x.limits.MaxBytes)
	}
	clean, err := x.prepare(name)
	if err != nil {
		return err
	}
	f, err := x.root.OpenFile(clean, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	x.created = append(x.created, clean)
	n, err := io.Copy(f, io.LimitReader(r, left+1))
	x.bytes += n
	if err == nil && n > left {
		err = fmt.Errorf("%w: entry %q: archive expands beyond %d bytes", ErrTooLarge, name, x.limits.MaxBytes)
	}
	if err == nil {
		err = f.Chmod(mode.Perm())
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("entry %q: %w", name, err)
	}
	x.regular[clean] = true
	return nil
}

// symlink creates name -> target. The target must be relative, and ".."
// may only appear as leading elements that do not climb above the
// destination. Since directories on the way are real (ensureDir) and never
// replaced, climbing is resolved lexically; the descending part ends inside
// the destination or at another link checked by the same rule.
func (x *extractor) symlink(name, target string) error {
	clean, err := cleanName(name)
	if err != nil {
		return err
	}
	switch {
	case target == "":
		return unsafeEntry(name, "empty symlink target")
	case strings.ContainsAny(target, "\x00\\"):
		return unsafeEntry(name, "NUL or backslash in symlink target")
	case strings.HasPrefix(target, "/"):
		return unsafeEntry(name, "absolute symlink target "+target)
	}
	up, descending := 0, false
	for _, el := range strings.Split(target, "/") {
		switch {
		case el == "" || el == ".":
		case el == "..":
			if descending {
				return unsafeEntry(name, "symlink target "+target+" has .. after a name")
			}
			up++
		default:
			descending = true
		}
	}
	depth := 0
	if d := filepath.Dir(clean); d != "." {
		depth = strings.Count(d, "/") + 1
	}
	if up > depth {
		return unsafeEntry(name, "symlink target "+target+" points outside the destination")
	}
	if clean, err = x.prepare(name); err != nil {
		return err
	}
	if err := x.root.Symlink(target, clean); err != nil {
		return err
	}
	x.created = append(x.created, clean)
	return nil
}

// hardlink links name to target, which must be a regular file this archive
// extracted earlier.
func (x *extractor) hardlink(name, target string) error {
	t, err := cleanName(target)
	if err != nil {
		return unsafeEntry(name, fmt.Sprintf("hard link target %q leaves the destination", target))
	}
	if !x.regular[t] {
		return unsafeEntry(name, fmt.Sprintf("hard link target %q is not a file extracted earlier", target))
	}
	if c, err := cleanName(name); err == nil && c == t {
		return unsafeEntry(name, "hard link to itself")
	}
	clean, err := x.prepare(name)
	if err != nil {
		return err
	}
	if err := x.root.Link(t, clean); err != nil {
		return err
	}
	x.created = append(x.created, clean)
	x.regular[clean] = true
	return nil
}

// finish applies directory modes, deepest first.
func (x *extractor) finish() error {
	for _, d := range slices.Backward(x.dirs) {
		if err := x.root.Chmod(d.name, d.mode); err != nil {
			return err
		}
	}
	return nil
}

// cleanup removes everything the extraction created.
func (x *extractor) cleanup() {
	for _, p := range slices.Backward(x.created) {
		_ = x.root.RemoveAll(p)
	}
}
