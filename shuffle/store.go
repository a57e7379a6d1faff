package shuffle

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/flint-mesos/flint/shuffle/shuffleblock"
)

// ErrNoOutput is wrapped when a map output is not in the store: never
// written, released, or deleted from disk under the executor.
var ErrNoOutput = errors.New("shuffle: no such map output")

// Store is one executor's shuffle files: shuffle_<id>/<map>.data and
// .index under its root, written by Writers, read by Block, deleted by
// RemoveShuffle and Close. It is safe for concurrent use.
type Store struct {
	root string
	mu   sync.Mutex // serialises commits: the first successful attempt wins
}

// OpenStore makes the directory root (and its parents) for an executor's
// shuffle files. Use a directory of its own: Close removes it.
func OpenStore(root string) (*Store, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("shuffle: store: %w", err)
	}
	return &Store{root: root}, nil
}

// Root is the store's directory.
func (s *Store) Root() string { return s.root }

func (s *Store) dir(shuffleID int) string {
	return filepath.Join(s.root, "shuffle_"+strconv.Itoa(shuffleID))
}

// OutputPaths are the index and data files of map output (shuffleID,
// mapIndex) in the store whose root is root: how a reader on the same
// host finds another executor's files.
func OutputPaths(root string, shuffleID, mapIndex int) (index, data string) {
	base := filepath.Join(root, "shuffle_"+strconv.Itoa(shuffleID), strconv.Itoa(mapIndex))
	return base + ".index", base + ".data"
}

// DataPath is where the data of map output (shuffleID, mapIndex) lives.
func (s *Store) DataPath(shuffleID, mapIndex int) string {
	_, d := OutputPaths(s.root, shuffleID, mapIndex)
	return d
}

// IndexPath is the index file of map output (shuffleID, mapIndex).
func (s *Store) IndexPath(shuffleID, mapIndex int) string {
	i, _ := OutputPaths(s.root, shuffleID, mapIndex)
	return i
}

// tempDir is where spills and uncommitted outputs of shuffleID go.
func (s *Store) tempDir(shuffleID int) (string, error) {
	d := s.dir(shuffleID)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", fmt.Errorf("shuffle: %w", err)
	}
	return d, nil
}

// commit renames an attempt's finished data file into place and writes
// its index, unless an earlier attempt of the same map index and
// generation (Config.Generation) already committed a consistent pair:
// then the attempt's file is deleted and the committed offsets are
// returned (Spark's writeMetadataFileAndCommit).
func (s *Store) commit(shuffleID, mapIndex, gen int, tmpData string, offsets []int64) ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	idx := s.IndexPath(shuffleID, mapIndex)
	if prior, err := ReadIndex(idx); err == nil && s.generation(idx) >= gen {
		if st, err := os.Stat(s.DataPath(shuffleID, mapIndex)); err == nil && st.Size() == prior[len(prior)-1] {
			os.Remove(tmpData)
			return prior, nil
		}
	}
	tmpIdx := tmpData + ".index"
	if err := os.WriteFile(tmpIdx, shuffleblock.EncodeIndex(offsets), 0o600); err != nil {
		os.Remove(tmpIdx)
		return nil, fmt.Errorf("shuffle: write index: %w", err)
	}
	if err := os.Rename(tmpData, s.DataPath(shuffleID, mapIndex)); err != nil {
		os.Remove(tmpIdx)
		return nil, fmt.Errorf("shuffle: commit: %w", err)
	}
	if err := os.Rename(tmpIdx, idx); err != nil {
		return nil, fmt.Errorf("shuffle: commit: %w", err)
	}
	if gen > 0 {
		// after the pair: if this fails, the task fails and the next
		// attempt of its generation replaces the pair again
		if err := writeFileAtomic(idx+".gen", []byte(strconv.Itoa(gen)), tmpData+".gen"); err != nil {
			return nil, err
		}
	}
	return offsets, nil
}

// generation is the generation of the output whose index is idx (0 when
// none was recorded: a determinate stage's).
func (s *Store) generation(idx string) int {
	b, err := os.ReadFile(idx + ".gen")
	if err != nil {
		return 0
	}
	g, err := strconv.Atoi(string(b))
	if err != nil {
		return 0
	}
	return g
}

// writeFileAtomic writes data to path through tmp.
func writeFileAtomic(path string, data []byte, tmp string) error {
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("shuffle: commit: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("shuffle: commit: %w", err)
	}
	return nil
}

// ReadIndex reads and checks an index file.
func ReadIndex(path string) ([]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNoOutput, path)
		}
		return nil, fmt.Errorf("shuffle: %w", err)
	}
	off, err := shuffleblock.DecodeIndex(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return off, nil
}

// Block is the byte range of one reduce partition in a map output's data
// file, open for reading. Close it.
type Block struct {
	*io.SectionReader
	File           *os.File // for zero-copy serving (sendfile from File at Offset)
	Offset, Length int64
}

// Close closes the data file.
func (b *Block) Close() error { return b.File.Close() }

// OpenBlock opens reduce partition reduce of map output (shuffleID,
// mapIndex). It checks the index against the data file's size, so a
// truncated or replaced file is reported rather than served.
func (s *Store) OpenBlock(shuffleID, mapIndex, reduce int) (*Block, error) {
	return OpenBlockAt(s.IndexPath(shuffleID, mapIndex), s.DataPath(shuffleID, mapIndex), reduce)
}

// OpenBlockAt opens a block by file paths: how a reader on the same host
// reads another executor's store directly.
func OpenBlockAt(indexPath, dataPath string, reduce int) (*Block, error) {
	offsets, err := ReadIndex(indexPath)
	if err != nil {
		return nil, err
	}
	if reduce < 0 || reduce >= len(offsets)-1 {
		return nil, fmt.Errorf("shuffle: reduce partition %d of a map output with %d", reduce, len(offsets)-1)
	}
	f, err := os.Open(dataPath)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrNoOutput, dataPath)
		}
		return nil, fmt.Errorf("shuffle: %w", err)
	}
	st, err := f.Stat()
	if err != nil || st.Size() != offsets[len(offsets)-1] {
		f.Close()
		return nil, fmt.Errorf("%w: %s is %d bytes, its index says %d", shuffleblock.ErrCorrupt, dataPath, sizeOf(st), offsets[len(offsets)-1])
	}
	off, n := offsets[reduce], offsets[reduce+1]-offsets[reduce]
	return &Block{SectionReader: io.NewSectionReader(f, off, n), File: f, Offset: off, Length: n}, nil
}

func sizeOf(st os.FileInfo) int64 {
	if st == nil {
		return -1
	}
	return st.Size()
}

// RemoveShuffle deletes every file of shuffleID: the shuffle was released.
func (s *Store) RemoveShuffle(shuffleID int) error {
	if err := os.RemoveAll(s.dir(shuffleID)); err != nil {
		return fmt.Errorf("shuffle: remove shuffle %d: %w", shuffleID, err)
	}
	return nil
}

// Close deletes the store's root with everything in it: the application
// ended.
func (s *Store) Close() error {
	if err := os.RemoveAll(s.root); err != nil {
		return fmt.Errorf("shuffle: remove %s: %w", s.root, err)
	}
	return nil
}
