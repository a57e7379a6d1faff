package mapoutput

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"
)

// Errors of the tracker.
var (
	ErrUnknownShuffle = errors.New("mapoutput: unknown shuffle")
	ErrInvalidShuffle = errors.New("mapoutput: invalid shuffle")
	ErrInvalidStatus  = errors.New("mapoutput: invalid map status")
)

// Config tunes how sizes are compressed.
type Config struct {
	// From this many reduce partitions on, sizes are kept as an empty-block
	// bitmap plus an average (Spark's
	// spark.shuffle.minNumPartitionsToHighlyCompress). Default 2000.
	MinPartitionsToHighlyCompress int
	// In the highly compressed form, blocks of at least this many bytes keep
	// their exact size (spark.shuffle.accurateBlockThreshold). Default 100 MiB.
	AccurateBlockThreshold uint64
}

// DefaultConfig returns Spark's defaults.
func DefaultConfig() Config {
	return Config{MinPartitionsToHighlyCompress: 2000, AccurateBlockThreshold: 100 << 20}
}

// Tracker is the driver's map-output tracker. See the package documentation.
type Tracker struct {
	cfg      Config
	epoch    int64
	changes  uint64 // every change of any shuffle's outputs (Version)
	shuffles map[int]*shuffleState
	// locations are interned: a map output stores an index, so the tracker
	// keeps one copy of each executor's strings.
	locs     []Location
	locIndex map[Location]int32
	locHost  []int32 // host index of each location
	hosts    []string
	hostIdx  map[string]int32
	scratch  []uint64 // per host, for PreferredHosts
	lastLoc  int32    // the location interned last (-1: none)
}

type shuffleState struct {
	numMaps, numReduces int
	available           int
	version             uint64   // counts changes of its outputs (Version)
	outputs             []output // by map index
	// slab is where the encoded sizes of this shuffle's next outputs are
	// carved from. A slab's memory lives while any output (or snapshot) in
	// it does; they all belong to this shuffle, so UnregisterShuffle frees
	// them.
	slab slab
}

// slab hands out byte slices from larger allocations: one allocation per
// slabOutputs encoded outputs instead of one each (a 1,001-byte encoding
// also no longer rounds up to a 1,024-byte size class).
type slab struct {
	buf     []byte
	outputs int // how many outputs a new buffer is sized for
}

// slabOutputs is how many encoded outputs one slab buffer holds at most.
const slabOutputs = 64

// alloc returns n fresh bytes (capacity n, so an append can never reach a
// neighbour).
func (s *slab) alloc(n int) []byte {
	if len(s.buf) < n {
		k := max(1, min(s.outputs, 1<<20/n))
		// whole pages: a large allocation is rounded up to them anyway
		s.buf = make([]byte, (k*n+8191)&^8191)
	}
	b := s.buf[:n:n]
	s.buf = s.buf[n:]
	return b
}

// output is one registered map output; loc < 0 means none.
type output struct {
	sizes  []byte // encoded (see encodeSizes); never mutated once set
	taskID uint64
	loc    int32
}

// NewTracker returns an empty tracker; zero fields of cfg take defaults.
func NewTracker(cfg Config) *Tracker {
	d := DefaultConfig()
	if cfg.MinPartitionsToHighlyCompress <= 0 {
		cfg.MinPartitionsToHighlyCompress = d.MinPartitionsToHighlyCompress
	}
	if cfg.AccurateBlockThreshold == 0 {
		cfg.AccurateBlockThreshold = d.AccurateBlockThreshold
	}
	return &Tracker{cfg: cfg, shuffles: map[int]*shuffleState{}, locIndex: map[Location]int32{}, hostIdx: map[string]int32{}, lastLoc: -1}
}

// Epoch is incremented whenever outputs are lost. Tasks carry the epoch
// they were created at; an executor whose cached statuses are older must
// refresh them.
func (t *Tracker) Epoch() int64 { return t.epoch }

// IncrementEpoch advances the epoch (the DAG core does so when a map stage
// finishes, as Spark does) and returns the new value.
func (t *Tracker) IncrementEpoch() int64 {
	t.epoch++
	return t.epoch
}

// RegisterShuffle declares a shuffle of numMaps map outputs with
// numReduces blocks each. Registering an existing shuffle with the same
// shape keeps its outputs (shuffles outlive jobs); another shape is an
// error.
func (t *Tracker) RegisterShuffle(shuffleID, numMaps, numReduces int) error {
	if numMaps < 0 || numReduces < 0 || numMaps > 1<<31-1 || numReduces > 1<<31-1 {
		return fmt.Errorf("%w: shuffle %d with %d maps and %d reducers", ErrInvalidShuffle, shuffleID, numMaps, numReduces)
	}
	if s := t.shuffles[shuffleID]; s != nil {
		if s.numMaps != numMaps || s.numReduces != numReduces {
			return fmt.Errorf("%w: shuffle %d is registered with %d maps and %d reducers, not %d and %d",
				ErrInvalidShuffle, shuffleID, s.numMaps, s.numReduces, numMaps, numReduces)
		}
		return nil
	}
	s := &shuffleState{numMaps: numMaps, numReduces: numReduces, outputs: make([]output, numMaps),
		slab: slab{outputs: min(numMaps, slabOutputs)}}
	for i := range s.outputs {
		s.outputs[i].loc = -1
	}
	t.shuffles[shuffleID] = s
	return nil
}

// UnregisterShuffle forgets a shuffle and its outputs.
func (t *Tracker) UnregisterShuffle(shuffleID int) {
	delete(t.shuffles, shuffleID)
}

// Shuffles returns the registered shuffle ids, ascending.
func (t *Tracker) Shuffles() []int {
	ids := make([]int, 0, len(t.shuffles))
	for id := range t.shuffles {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Shape returns a registered shuffle's number of maps and reducers.
func (t *Tracker) Shape(shuffleID int) (numMaps, numReduces int, ok bool) {
	s := t.shuffles[shuffleID]
	if s == nil {
		return 0, 0, false
	}
	return s.numMaps, s.numReduces, true
}

func (t *Tracker) shuffle(id int) (*shuffleState, error) {
	s := t.shuffles[id]
	if s == nil {
		return nil, fmt.Errorf("%w %d", ErrUnknownShuffle, id)
	}
	return s, nil
}

func (t *Tracker) intern(l Location) int32 {
	// an executor's statuses often come in a row
	if t.lastLoc >= 0 && t.locs[t.lastLoc] == l {
		return t.lastLoc
	}
	if i, ok := t.locIndex[l]; ok {
		t.lastLoc = i
		return i
	}
	i := int32(len(t.locs))
	t.locs = append(t.locs, l)
	t.locIndex[l] = i
	h, ok := t.hostIdx[l.Host]
	if !ok {
		h = int32(len(t.hosts))
		t.hosts = append(t.hosts, l.Host)
		t.hostIdx[l.Host] = h
	}
	t.locHost = append(t.locHost, h)
	t.lastLoc = i
	return i
}

// RegisterMapOutput records a map output, replacing any earlier one for
// the same map index (a later attempt's output is as good as the first:
// the shuffle writer keeps the first committed file, whose sizes the
// executor reports). It does not change the epoch.
func (t *Tracker) RegisterMapOutput(st Status) error {
	s, err := t.shuffle(st.ShuffleID)
	if err != nil {
		return err
	}
	switch {
	case st.MapIndex < 0 || st.MapIndex >= s.numMaps:
		return fmt.Errorf("%w: shuffle %d has no map index %d (%d maps)", ErrInvalidStatus, st.ShuffleID, st.MapIndex, s.numMaps)
	case len(st.Sizes) != s.numReduces:
		return fmt.Errorf("%w: shuffle %d map %d reports %d block sizes for %d reducers",
			ErrInvalidStatus, st.ShuffleID, st.MapIndex, len(st.Sizes), s.numReduces)
	case st.Location.ExecutorID == "":
		return fmt.Errorf("%w: shuffle %d map %d has no executor", ErrInvalidStatus, st.ShuffleID, st.MapIndex)
	}
	o := &s.outputs[st.MapIndex]
	if o.loc < 0 {
		s.available++
	}
	t.changes++
	s.version = t.changes
	*o = output{sizes: encodeSizes(st.Sizes, &t.cfg, &s.slab), taskID: st.TaskID, loc: t.intern(st.Location)}
	return nil
}

// outputBytes is what one map output's record takes in a shuffle's
// outputs, registered or not (its encoded sizes apart).
const outputBytes = int(unsafe.Sizeof(output{}))

// MapOutputBytes is the memory the tracker holds for a shuffle's map
// outputs: a record per map index and each registered output's encoded
// sizes (their length: one-byte-per-reducer encodings are carved from
// shared slabs, the rest allocated alone). The interned locations, shared
// by every shuffle, are LocationBytes.
func (t *Tracker) MapOutputBytes(shuffleID int) (int, error) {
	s, err := t.shuffle(shuffleID)
	if err != nil {
		return 0, err
	}
	n := len(s.outputs) * outputBytes
	for i := range s.outputs {
		n += len(s.outputs[i].sizes)
	}
	return n, nil
}

// LocationBytes is the memory of the interned location table: each
// location's strings and record, and each host's string.
func (t *Tracker) LocationBytes() int {
	n := len(t.locs)*int(unsafe.Sizeof(Location{})+unsafe.Sizeof(int32(0))) + len(t.hosts)*int(unsafe.Sizeof(""))
	for _, l := range t.locs {
		n += len(l.ExecutorID) + len(l.Host) + len(l.Address)
	}
	for _, h := range t.hosts {
		n += len(h)
	}
	return n
}

// UnregisterMapOutput drops the output of (shuffleID, mapIndex) if it is
// still the one at loc (a fetch failure names where it fetched from; an
// output re-registered elsewhere since is kept). It reports whether an
// output was dropped; dropping one increments the epoch.
func (t *Tracker) UnregisterMapOutput(shuffleID, mapIndex int, loc Location) bool {
	s := t.shuffles[shuffleID]
	if s == nil || mapIndex < 0 || mapIndex >= s.numMaps {
		return false
	}
	o := &s.outputs[mapIndex]
	if o.loc < 0 || t.locs[o.loc] != loc {
		return false
	}
	*o = output{loc: -1}
	s.available--
	t.changes++
	s.version = t.changes
	t.epoch++
	return true
}

// Lost names one output dropped by RemoveOutputsOn*.
type Lost struct{ ShuffleID, MapIndex int }

// Executors names the executors serving at least one registered output.
func (t *Tracker) Executors() map[string]bool {
	used := make([]bool, len(t.locs))
	for _, s := range t.shuffles {
		for m := range s.outputs {
			if o := &s.outputs[m]; o.loc >= 0 {
				used[o.loc] = true
			}
		}
	}
	out := map[string]bool{}
	for i, u := range used {
		if u {
			out[t.locs[i].ExecutorID] = true
		}
	}
	return out
}

// RemoveOutputsOnExecutor drops every output served by the executor and
// returns them (by shuffle, then map index). Dropping any increments the
// epoch once.
func (t *Tracker) RemoveOutputsOnExecutor(executorID string) []Lost {
	return t.removeWhere(func(l *Location) bool { return l.ExecutorID == executorID })
}

// RemoveOutputsOnHost drops every output on the host (all its executors),
// for when the host's shuffle files are gone too.
func (t *Tracker) RemoveOutputsOnHost(host string) []Lost {
	return t.removeWhere(func(l *Location) bool { return l.Host == host })
}

// RemoveOutputsWhere drops every output whose location matches, as
// RemoveOutputsOn* do.
func (t *Tracker) RemoveOutputsWhere(match func(*Location) bool) []Lost {
	return t.removeWhere(match)
}

func (t *Tracker) removeWhere(match func(*Location) bool) []Lost {
	hit := make([]bool, len(t.locs))
	anyHit := false
	for i := range t.locs {
		if match(&t.locs[i]) {
			hit[i], anyHit = true, true
		}
	}
	if !anyHit {
		return nil
	}
	var lost []Lost
	for _, id := range t.Shuffles() {
		s := t.shuffles[id]
		for m := range s.outputs {
			if o := &s.outputs[m]; o.loc >= 0 && hit[o.loc] {
				*o = output{loc: -1}
				s.available--
				t.changes++
				s.version = t.changes
				lost = append(lost, Lost{ShuffleID: id, MapIndex: m})
			}
		}
	}
	if len(lost) > 0 {
		t.epoch++
	}
	return lost
}

// Version identifies the state of a shuffle's outputs: it moves whenever
// one is registered, replaced or dropped, and never repeats (a shuffle
// released and registered again does not return to an earlier version),
// so two Snapshots taken at one version are the same. Unknown shuffles
// and shuffles with no output registered yet are at version 0.
func (t *Tracker) Version(shuffleID int) uint64 {
	if s := t.shuffles[shuffleID]; s != nil {
		return s.version
	}
	return 0
}

// IsAvailable reports whether every map output of the shuffle is registered.
func (t *Tracker) IsAvailable(shuffleID int) bool {
	s := t.shuffles[shuffleID]
	return s != nil && s.available == s.numMaps
}

// NumAvailable is the number of registered outputs of the shuffle.
func (t *Tracker) NumAvailable(shuffleID int) int {
	if s := t.shuffles[shuffleID]; s != nil {
		return s.available
	}
	return 0
}

// Missing lists the map indices of the shuffle without an output, ascending.
func (t *Tracker) Missing(shuffleID int) []int {
	s := t.shuffles[shuffleID]
	if s == nil {
		return nil
	}
	out := make([]int, 0, s.numMaps-s.available)
	for m := range s.outputs {
		if s.outputs[m].loc < 0 {
			out = append(out, m)
		}
	}
	return out
}

// Output returns where map output (shuffleID, mapIndex) lives and the
// attempt that wrote it.
func (t *Tracker) Output(shuffleID, mapIndex int) (loc Location, taskID uint64, ok bool) {
	s := t.shuffles[shuffleID]
	if s == nil || mapIndex < 0 || mapIndex >= s.numMaps || s.outputs[mapIndex].loc < 0 {
		return Location{}, 0, false
	}
	o := s.outputs[mapIndex]
	return t.locs[o.loc], o.taskID, true
}

// BlockSize returns the (compressed, so approximate) size of the block of
// reduce partition reduce in map output (shuffleID, mapIndex).
func (t *Tracker) BlockSize(shuffleID, mapIndex, reduce int) (uint64, bool) {
	s := t.shuffles[shuffleID]
	if s == nil || mapIndex < 0 || mapIndex >= s.numMaps || reduce < 0 || reduce >= s.numReduces {
		return 0, false
	}
	o := s.outputs[mapIndex]
	if o.loc < 0 {
		return 0, false
	}
	return sizeOf(o.sizes, s.numReduces, reduce), true
}

// PreferredHosts returns the hosts that hold at least fraction of the
// bytes reduce partition reduce reads (Spark's
// getLocationsWithLargestOutputs with REDUCER_PREF_LOCS_FRACTION = 0.2),
// largest first, ties by name. Nothing is returned while outputs are
// missing or the partition is empty.
func (t *Tracker) PreferredHosts(shuffleID, reduce int, fraction float64) []string {
	s := t.shuffles[shuffleID]
	if s == nil || s.available < s.numMaps || reduce < 0 || reduce >= s.numReduces {
		return nil
	}
	if cap(t.scratch) < len(t.hosts) {
		t.scratch = make([]uint64, len(t.hosts))
	}
	byHost := t.scratch[:len(t.hosts)]
	clear(byHost)
	var total uint64
	for m := range s.outputs {
		o := s.outputs[m]
		if sz := sizeOf(o.sizes, s.numReduces, reduce); sz > 0 {
			byHost[t.locHost[o.loc]] += sz
			total += sz
		}
	}
	if total == 0 {
		return nil
	}
	var idx []int
	for h, sz := range byHost {
		if sz > 0 && float64(sz)/float64(total) >= fraction {
			idx = append(idx, h)
		}
	}
	slices.SortFunc(idx, func(a, b int) int {
		if byHost[a] != byHost[b] {
			if byHost[a] > byHost[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(t.hosts[a], t.hosts[b])
	})
	hosts := make([]string, len(idx))
	for i, h := range idx {
		hosts[i] = t.hosts[h]
	}
	return hosts
}
