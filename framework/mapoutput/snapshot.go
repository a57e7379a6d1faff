package mapoutput

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/flint-mesos/flint/internal/varenc"
)

// ErrBadSnapshot is returned for an encoded snapshot that cannot be decoded.
var ErrBadSnapshot = errors.New("mapoutput: bad snapshot encoding")

// Snapshot is a read-only copy of one shuffle's outputs at an epoch: what a
// reducer needs to plan its fetches. It shares the tracker's encoded sizes
// (never mutated), so taking one costs one slice per map output, not per
// block.
type Snapshot struct {
	ShuffleID  int
	Epoch      int64
	NumReduces int
	// Version is the tracker's Version of the shuffle it was taken at (not
	// encoded: the driver's own).
	Version   uint64
	Locations []Location
	outputs   []output
}

// Snapshot returns the shuffle's current outputs.
func (t *Tracker) Snapshot(shuffleID int) (*Snapshot, error) {
	s, err := t.shuffle(shuffleID)
	if err != nil {
		return nil, err
	}
	outs := make([]output, len(s.outputs))
	// Re-index the locations this shuffle uses, so a snapshot carries only
	// those (the tracker's table holds every executor ever seen).
	remap := map[int32]int32{}
	var locs []Location
	for m, o := range s.outputs {
		if o.loc < 0 {
			outs[m] = output{loc: -1}
			continue
		}
		i, ok := remap[o.loc]
		if !ok {
			i = int32(len(locs))
			remap[o.loc] = i
			locs = append(locs, t.locs[o.loc])
		}
		outs[m] = output{sizes: o.sizes, taskID: o.taskID, loc: i}
	}
	return &Snapshot{ShuffleID: shuffleID, Epoch: t.epoch, NumReduces: s.numReduces, Version: s.version, Locations: locs, outputs: outs}, nil
}

// NumMaps is the number of map outputs of the shuffle.
func (s *Snapshot) NumMaps() int { return len(s.outputs) }

// Output returns where map output mapIndex lives, if anywhere.
func (s *Snapshot) Output(mapIndex int) (Location, bool) {
	if mapIndex < 0 || mapIndex >= len(s.outputs) || s.outputs[mapIndex].loc < 0 {
		return Location{}, false
	}
	return s.Locations[s.outputs[mapIndex].loc], true
}

// BlockSize is the (approximate) size of reduce partition reduce's block
// in map output mapIndex; false when the output is missing.
func (s *Snapshot) BlockSize(mapIndex, reduce int) (uint64, bool) {
	if mapIndex < 0 || mapIndex >= len(s.outputs) || reduce < 0 || reduce >= s.NumReduces {
		return 0, false
	}
	o := s.outputs[mapIndex]
	if o.loc < 0 {
		return 0, false
	}
	return sizeOf(o.sizes, s.NumReduces, reduce), true
}

// Block is one block a reducer reads.
type Block struct {
	MapIndex, ReduceIndex int
	Size                  uint64 // approximate, from the compressed sizes
}

// FetchGroup is the blocks to read from one location.
type FetchGroup struct {
	Location Location
	Blocks   []Block
	Bytes    uint64
}

// Blocks lists the non-empty blocks of reduce partitions [start, end) by
// location (in the order locations first appear among the map outputs;
// a fetcher randomises the order itself). A missing map output is a
// *FetchFailure naming it (with no location), as Spark's
// MetadataFetchFailedException: the reducer cannot complete and the DAG
// core must recompute the output.
func (s *Snapshot) Blocks(start, end int) ([]FetchGroup, error) {
	if start < 0 || end > s.NumReduces || start >= end {
		return nil, fmt.Errorf("mapoutput: reduce range [%d, %d) outside shuffle %d's %d partitions", start, end, s.ShuffleID, s.NumReduces)
	}
	groups := make([]FetchGroup, len(s.Locations))
	for m, o := range s.outputs {
		if o.loc < 0 {
			return nil, &FetchFailure{ShuffleID: s.ShuffleID, MapIndex: m, ReduceIndex: start,
				Message: fmt.Sprintf("no location for map output %d of shuffle %d at epoch %d", m, s.ShuffleID, s.Epoch)}
		}
		g := &groups[o.loc]
		for r := start; r < end; r++ {
			if sz := sizeOf(o.sizes, s.NumReduces, r); sz > 0 {
				g.Blocks = append(g.Blocks, Block{MapIndex: m, ReduceIndex: r, Size: sz})
				g.Bytes += sz
			}
		}
	}
	out := groups[:0]
	for i, g := range groups {
		if len(g.Blocks) > 0 {
			g.Location = s.Locations[i]
			out = append(out, g)
		}
	}
	return out, nil
}

const snapshotVersion = 1

// MarshalBinary encodes the snapshot for shipping to executors.
func (s *Snapshot) MarshalBinary() ([]byte, error) {
	b := []byte{snapshotVersion}
	b = binary.AppendVarint(b, int64(s.ShuffleID))
	b = binary.AppendVarint(b, s.Epoch)
	b = binary.AppendUvarint(b, uint64(s.NumReduces))
	b = binary.AppendUvarint(b, uint64(len(s.Locations)))
	for _, l := range s.Locations {
		for _, str := range [3]string{l.ExecutorID, l.Host, l.Address} {
			b = binary.AppendUvarint(b, uint64(len(str)))
			b = append(b, str...)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(s.outputs)))
	for _, o := range s.outputs {
		b = binary.AppendUvarint(b, uint64(o.loc+1))
		if o.loc < 0 {
			continue
		}
		b = binary.AppendUvarint(b, o.taskID)
		b = binary.AppendUvarint(b, uint64(len(o.sizes)))
		b = append(b, o.sizes...)
	}
	return b, nil
}

// UnmarshalBinary decodes MarshalBinary's output; malformed input is an
// ErrBadSnapshot and leaves s unchanged.
func (s *Snapshot) UnmarshalBinary(data []byte) error {
	d := varenc.NewDecoder(data, ErrBadSnapshot)
	if v := d.Byte(); v != snapshotVersion && d.Err() == nil {
		return fmt.Errorf("%w: version %d, want %d", ErrBadSnapshot, v, snapshotVersion)
	}
	var out Snapshot
	out.ShuffleID = int(d.Varint())
	out.Epoch = d.Varint()
	out.NumReduces = d.Count(1 << 31)
	nlocs := d.Count(len(data)) // every location takes at least 3 bytes
	for range nlocs {
		if d.Err() != nil {
			break
		}
		out.Locations = append(out.Locations, Location{ExecutorID: d.Str(), Host: d.Str(), Address: d.Str()})
	}
	nmaps := d.Count(len(data))
	if d.Err() == nil {
		out.outputs = make([]output, 0, nmaps)
	}
	for range nmaps {
		if d.Err() != nil {
			break
		}
		loc := int64(d.Uvarint()) - 1
		if loc >= int64(nlocs) || loc < -1 {
			d.Fail("location %d of %d", loc, nlocs)
			break
		}
		if loc < 0 {
			out.outputs = append(out.outputs, output{loc: -1})
			continue
		}
		o := output{loc: int32(loc), taskID: d.Uvarint()}
		o.sizes = d.Bytes()
		if d.Err() == nil && !validEncoding(o.sizes, out.NumReduces) {
			d.Fail("map %d: sizes do not fit %d reducers", len(out.outputs), out.NumReduces)
		}
		out.outputs = append(out.outputs, o)
	}
	if err := d.Done(); err != nil {
		return err
	}
	*s = out
	return nil
}
