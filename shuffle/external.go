package shuffle

import (
	"fmt"
	"io"
	"iter"
	"os"

	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/shuffle/shuffleblock"
)

// ExternalMerge merges sorted streams with at most fanIn of them open at
// once: while there are more, groups of fanIn are merged into sorted
// runs in dir (combining equal keys when combine is set) and the runs
// merged in turn, so the memory of a merge is fanIn open streams however
// many blocks a reduce partition has. Streams are opened (read from) only
// when their group is merged. Unordered streams without a combine are
// concatenated, one read at a time, so they need no runs. Close the result
// to delete its runs.
func ExternalMerge(streams []Stream, order Order, combine Combine, fanIn int, dir string, c shuffleblock.Compression) (*Merged, error) {
	fanIn = max(fanIn, 2)
	m := &Merged{}
	if !order.Sorted() && combine == nil {
		fanIn = len(streams)
	}
	for len(streams) > fanIn {
		var next []Stream
		for i := 0; i < len(streams); i += fanIn {
			group := streams[i:min(i+fanIn, len(streams))]
			if len(group) == 1 {
				next = append(next, group[0])
				continue
			}
			s, err := m.pass(group, order, combine, dir, c)
			if err != nil {
				m.Close()
				return nil, err
			}
			next = append(next, s)
		}
		streams = next
	}
	mg, err := NewMerger(streams, order, combine)
	if err != nil {
		m.Close()
		return nil, err
	}
	m.Merger = mg
	return m, nil
}

// Merged is the result of ExternalMerge.
type Merged struct {
	*Merger
	files  []*os.File
	Passes int   // intermediate runs written
	Bytes  int64 // bytes written to them
}

func (m *Merged) pass(group []Stream, order Order, combine Combine, dir string, c shuffleblock.Compression) (Stream, error) {
	f, err := os.CreateTemp(dir, ".merge-*")
	if err != nil {
		return nil, fmt.Errorf("shuffle: merge spill to %s: %w", dir, err)
	}
	m.files = append(m.files, f)
	mg, err := NewMerger(group, order, combine)
	if err != nil {
		return nil, err
	}
	fw := shuffleblock.NewWriter(f, c, 0)
	if err := copyRecords(fw, mg); err != nil {
		return nil, fmt.Errorf("shuffle: merge spill to %s: %w", dir, err)
	}
	if err := fw.Flush(); err != nil {
		return nil, fmt.Errorf("shuffle: merge spill to %s: %w", dir, err)
	}
	m.Passes++
	m.Bytes += fw.Written()
	return shuffleblock.NewReader(io.NewSectionReader(f, 0, fw.Written())), nil
}

// Close deletes the intermediate runs.
func (m *Merged) Close() error {
	for _, f := range m.files {
		f.Close()
		os.Remove(f.Name())
	}
	m.files = nil
	return nil
}

// Records decodes a stream of encoded records into typed pairs; the
// sequence stops at the first error, which it yields.
func Records[K, V any](s Stream, keys recordcodec.Codec[K], values recordcodec.Codec[V]) iter.Seq2[recordcodec.KV[K, V], error] {
	return func(yield func(recordcodec.KV[K, V], error) bool) {
		for {
			kb, vb, err := s.Next()
			if err == io.EOF {
				return
			}
			var kv recordcodec.KV[K, V]
			if err == nil {
				if kv.Key, err = keys.Decode(kb); err == nil {
					kv.Value, err = values.Decode(vb)
				}
			}
			if !yield(kv, err) || err != nil {
				return
			}
		}
	}
}
