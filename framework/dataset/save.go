package dataset

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// SaveAsTextFile writes every record as a line into part files under dir
// (part-00000, … one per partition) with an output commit protocol: each
// task attempt writes a file of its own under dir/_temporary and renames
// it to its partition's name there only if no earlier attempt has (the
// first successful attempt wins); when every partition is done, the
// driver moves the part files into dir and writes dir/_SUCCESS. A job
// that fails leaves no part files in dir. dir must not exist or be
// empty, and be writable by the executors and the driver alike (a shared
// file system, or one host). A relative dir is resolved against the
// driver's working directory when the job is planned, as TextFile's
// inputs are; an executor that cannot open it fails the job at once
// (ErrInputUnreadable).
func SaveAsTextFile(ds Dataset[string], dir string) error {
	b := ds.n.b
	if b.Driver() || b.replay.captured == nil { // else an executor's replay is past its action
		b.freeze(fmt.Sprintf("output:%d", b.actions), func() any {
			if abs, err := filepath.Abs(dir); err == nil {
				return abs
			}
			return dir
		}, &dir)
	}
	tmp := filepath.Join(dir, "_temporary")
	if b.Driver() {
		if err := prepareOutput(dir); err != nil {
			b.fail(err)
		}
	}
	names, err := runAction(ds, "saveAsTextFile", nil, func(tc *taskContext, p int) (string, error) {
		return writePart(tc, ds, tmp, p)
	})
	if !b.Driver() {
		return err
	}
	if err != nil {
		os.RemoveAll(tmp)
		return err
	}
	for p, name := range names {
		if err := os.Rename(filepath.Join(tmp, name), filepath.Join(dir, name)); err != nil {
			os.RemoveAll(tmp)
			return fmt.Errorf("dataset: commit part %d of %s: %w", p, dir, err)
		}
	}
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("dataset: commit %s: %w", dir, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_SUCCESS"), nil, 0o644); err != nil {
		return fmt.Errorf("dataset: commit %s: %w", dir, err)
	}
	return nil
}

// prepareOutput makes dir, refusing one that holds anything (as Spark
// refuses an existing output directory).
func prepareOutput(dir string) error {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("dataset: output directory: %w", err)
	case len(ents) > 0:
		return fmt.Errorf("dataset: output directory %s already exists and is not empty", dir)
	}
	if err := os.MkdirAll(filepath.Join(dir, "_temporary"), 0o755); err != nil {
		return fmt.Errorf("dataset: output directory: %w", err)
	}
	return nil
}

// writePart writes partition p into an attempt file and commits it as
// part-NNNNN in tmp unless another attempt did first. It returns the
// committed name.
func writePart(tc *taskContext, ds Dataset[string], tmp string, p int) (string, error) {
	name := fmt.Sprintf("part-%05d", p)
	var id [8]byte
	rand.Read(id[:])
	attempt := filepath.Join(tmp, "."+name+"-attempt-"+hex.EncodeToString(id[:]))
	f, err := os.Create(attempt)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			// the driver made tmp: this executor does not see the driver's files
			return "", unreadableInput(tmp, err)
		}
		return "", fmt.Errorf("dataset: write output: %w", err)
	}
	defer os.Remove(attempt)
	w := bufio.NewWriterSize(f, 256<<10)
	err = ds.n.run(tc, p, func(lines []string) error {
		for _, l := range lines {
			w.WriteString(l)
			if err := w.WriteByte('\n'); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("dataset: write %s: %w", attempt, err)
	}
	// link fails if the name exists: the first attempt to commit wins.
	if err := os.Link(attempt, filepath.Join(tmp, name)); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("dataset: commit %s: %w", name, err)
	}
	return name, nil
}
