package dataset

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/klauspost/compress/s2"

	"github.com/flint-mesos/flint/framework/recordcodec"
)

// spillWriter writes a persisted partition that does not fit the storage
// budget to a file in the executor's local directory: each record is a
// uvarint length and its record-codec encoding, in an s2 stream (which
// checksums its blocks).
type spillWriter[T any] struct {
	path  string
	f     *os.File
	z     *s2.Writer
	w     *bufio.Writer
	codec recordcodec.Codec[T]
	buf   []byte
}

// cacheDir is where this executor keeps persisted partitions on disk:
// below its shuffle directory, removed when the executor exits.
func cacheDir(tc *taskContext) string { return filepath.Join(tc.env.shuffle.Dir(), "cache") }

func newSpillWriter[T any](tc *taskContext, k cacheKey) (*spillWriter[T], error) {
	dir := cacheDir(tc)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("dataset: persist partition %d of %s on disk: %w", k.part, k.node, err)
	}
	f, err := os.CreateTemp(dir, fmt.Sprintf("part-%d-*", k.part))
	if err != nil {
		return nil, fmt.Errorf("dataset: persist partition %d of %s on disk: %w", k.part, k.node, err)
	}
	z := s2.NewWriter(f, s2.WriterConcurrency(1))
	return &spillWriter[T]{path: f.Name(), f: f, z: z, w: bufio.NewWriterSize(z, 64<<10), codec: recordcodec.For[T]()}, nil
}

func (s *spillWriter[T]) write(recs []T) error {
	for _, r := range recs {
		var err error
		if s.buf, err = s.codec.Append(s.buf[:0], r); err != nil {
			return fmt.Errorf("dataset: persist a record on disk: %w", err)
		}
		var hdr [binary.MaxVarintLen64]byte
		if _, err := s.w.Write(hdr[:binary.PutUvarint(hdr[:], uint64(len(s.buf)))]); err != nil {
			return fmt.Errorf("dataset: persist a record on disk: %w", err)
		}
		if _, err := s.w.Write(s.buf); err != nil {
			return fmt.Errorf("dataset: persist a record on disk: %w", err)
		}
	}
	return nil
}

func (s *spillWriter[T]) close() error {
	err := s.w.Flush()
	if zerr := s.z.Close(); err == nil {
		err = zerr
	}
	if ferr := s.f.Close(); err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("dataset: persist a partition on disk: %w", err)
	}
	return nil
}

// readSpilled emits the records of a partition persisted on disk, in
// batches.
func readSpilled[T any](tc *taskContext, path string, emit func([]T) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("dataset: read a persisted partition: %w", err)
	}
	defer f.Close()
	return decodeRecords(tc, bufio.NewReaderSize(s2.NewReader(f), 64<<10), "the persisted partition "+path, emit)
}

// estimateSize is about the memory a batch of records takes: the element
// size plus the encoded size of up to 8 evenly spaced records, scaled to
// the batch (for strings and slices, about what they point to).
func estimateSize[T any](c recordcodec.Codec[T], b []T) int64 {
	if len(b) == 0 {
		return 0
	}
	var zero T
	step := max(1, len(b)/8)
	var sampled, enc int64
	var buf []byte
	for i := 0; i < len(b); i += step {
		var err error
		if buf, err = c.Append(buf[:0], b[i]); err == nil {
			enc += int64(len(buf))
		}
		sampled++
	}
	return int64(len(b))*int64(unsafe.Sizeof(zero)) + enc*int64(len(b))/sampled
}
