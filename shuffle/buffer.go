package shuffle

import (
	"bytes"
	"encoding/binary"
	"io"
	"slices"
)

// buffer holds a task's records in memory: each partition's bytes in its
// own chunks (no copying on growth), and one 32-byte item per record in
// its partition's list of blocks — the partition order is the lists'
// order, so there is no partition sort. An item holds the first 16 key
// bytes and where the record is, so the sort compares items without
// touching the chunks (Spark's key-prefix sort), and streaming reads each
// record from its chunk once. Keeping a partition's bytes together is what
// makes streaming cheap: a sorted partition is gathered from a few MiB
// that fit the caches instead of from random places in the whole buffer,
// and an unsorted one is read sequentially.
//
// Blocks and chunks grow geometrically per partition (16 items up to
// blockItems; 1 KiB up to the chunk size) and are never reallocated, so
// every byte charged to the task's grant is live: no old list waits for
// the collector. A sorted partition is gathered into one scratch array,
// sorted there and streamed from it; partitions are streamed one after
// another, so the scratch is sized for the largest partition, and charged
// as partitions grow.
type buffer struct {
	chunkSize int        // the largest chunk (but for a larger record)
	parts     []itemList // by partition
	chunks    [][]byte   // the chunks of the partition being sorted
	records   int        // records held
	bytes     int64      // record bytes held
	order     Order      // set by sort: partitions are sorted as streamed
	sorted    bool       // records will be sorted: the scratch is needed
	scratch   []item     // the partition being streamed, when sorted
	reserved  int        // items of scratch charged to the grant
}

// itemList is one partition's items and record bytes: blocks[:used] hold
// the items, every block before the last full, the last holding last;
// blocks beyond are kept for reuse after a spill. The records' bytes are in
// chunks, filled up to fill in chunks[cur], the chunks before cur as far as
// they would take records, the chunks after it empty (kept for reuse after
// a spill). Blocks and chunks are allocated at full length and filled by
// index, so adding a record writes no pointer: the collector's write
// barrier, on while it marks, costs nothing here.
type itemList struct {
	blocks [][]item
	used   int // blocks in use
	last   int // items in blocks[used-1]
	n      int // items
	chunks [][]byte
	cur    int // the chunk being filled
	fill   int // bytes used in chunks[cur]
}

type item struct {
	prefix, prefix2 uint64 // key bytes 0–7 and 8–15, zero-padded, big endian
	chunk, off      uint32
	klen, vlen      uint32
}

const (
	itemSize   = 32
	blockItems = 4096 // 128 KiB, the largest block
	firstChunk = 1 << 10
)

// nextBlock is the capacity of a partition's next block.
func (l *itemList) nextBlock() int {
	if l.used > 0 {
		return min(2*cap(l.blocks[l.used-1]), blockItems)
	}
	return 16
}

// full reports whether adding an item needs a block not yet allocated.
func (l *itemList) full() bool {
	if l.used > 0 && l.last < cap(l.blocks[l.used-1]) {
		return false
	}
	return l.used == len(l.blocks)
}

func (l *itemList) add(it item) {
	if l.used == 0 || l.last == cap(l.blocks[l.used-1]) {
		if l.used == len(l.blocks) {
			l.blocks = append(l.blocks, newBlock(l.nextBlock()))
		}
		l.used++
		l.last = 0
	}
	blk := l.blocks[l.used-1]
	blk[:cap(blk)][l.last] = it
	l.last++
	l.n++
}

// items are the partition's blocks, each cut to the items it holds.
func (l *itemList) items() [][]item {
	bs := l.blocks[:l.used]
	for i, blk := range bs {
		n := cap(blk)
		if i == len(bs)-1 {
			n = l.last
		}
		bs[i] = blk[:n]
	}
	return bs
}

func (l *itemList) reset() {
	for i := range l.blocks[:l.used] {
		l.blocks[i] = l.blocks[i][:cap(l.blocks[i])]
	}
	l.used, l.last, l.n, l.cur, l.fill = 0, 0, 0, 0, 0
}

// chunkFor returns the index of the chunk that takes n more bytes, and
// the offset they go to, reusing kept chunks; -1 when a new chunk is
// needed.
func (l *itemList) chunkFor(n int) (int, int) {
	if l.cur < len(l.chunks) && l.fill+n <= len(l.chunks[l.cur]) {
		return l.cur, l.fill
	}
	for i := l.cur + 1; i < len(l.chunks); i++ {
		if n <= len(l.chunks[i]) {
			return i, 0
		}
	}
	return -1, 0
}

// nextChunk is the capacity of a new chunk for a record of n bytes.
func (l *itemList) nextChunk(n, largest int) int {
	size := min(firstChunk, largest)
	if k := len(l.chunks); k > 0 {
		size = min(2*len(l.chunks[k-1]), largest)
	}
	return max(n, size)
}

// prefixOf is key's first 8 bytes, zero-padded, big endian. A shorter
// key's bytes are shifted in one by one: copying them into an 8-byte array
// and loading that stalls on the store (its bytes cannot be forwarded to a
// wider load), which cost 5 % of a map task's CPU with 10-byte keys (whose
// second prefix is 2 bytes).
func prefixOf(key []byte) uint64 {
	if len(key) >= 8 {
		return binary.BigEndian.Uint64(key)
	}
	var x uint64
	for i, c := range key {
		x |= uint64(c) << (56 - 8*i)
	}
	return x
}

func prefix2Of(key []byte) uint64 {
	if len(key) <= 8 {
		return 0
	}
	return prefixOf(key[8:])
}

func newBuffer(chunkSize, parts int, sorted bool) buffer {
	return buffer{chunkSize: chunkSize, parts: make([]itemList, parts), sorted: sorted}
}

// need is the memory adding n bytes to partition part would take beyond
// what is held.
func (b *buffer) need(part, n int) int64 {
	var extra int64
	l := &b.parts[part]
	if l.full() {
		extra += int64(l.nextBlock()) * itemSize
	}
	if b.sorted && l.n >= b.reserved {
		// the sort's scratch must hold this partition too
		extra += blockItems * itemSize
	}
	if ci, _ := l.chunkFor(n); ci < 0 {
		extra += int64(l.nextChunk(n, b.chunkSize))
	}
	return extra
}

func (b *buffer) add(part int, key, value []byte) {
	n := len(key) + len(value)
	l := &b.parts[part]
	ci, off := l.chunkFor(n)
	if ci < 0 {
		l.chunks = append(l.chunks, newChunk(l.nextChunk(n, b.chunkSize)))
		ci, off = len(l.chunks)-1, 0
	}
	l.cur, l.fill = ci, off+n
	c := l.chunks[ci]
	copy(c[off:], key)
	copy(c[off+len(key):], value)
	if b.sorted && l.n >= b.reserved {
		b.reserved += blockItems // charged by need
	}
	l.add(item{prefix: prefixOf(key), prefix2: prefix2Of(key),
		chunk: uint32(ci), off: uint32(off), klen: uint32(len(key)), vlen: uint32(len(value))})
	b.records++
	b.bytes += int64(n)
}

func (b *buffer) key(it *item) []byte {
	return b.chunks[it.chunk][it.off : it.off+it.klen]
}

func (b *buffer) value(it *item) []byte {
	s := it.off + it.klen
	return b.chunks[it.chunk][s : s+it.vlen]
}

// sort makes the partitions stream in key order if o is sorted (each is
// sorted when it is streamed): byte order with an in-place radix sort on
// the 16 prefix bytes (whole keys compared only where the prefixes tie),
// other orders with pdqsort on whole keys.
func (b *buffer) sort(o Order) { b.order = o }

func (b *buffer) sortItems(a []item) {
	if b.order.bytewise {
		b.radixSort(a, 0)
	} else {
		slices.SortFunc(a, func(x, y item) int { return b.order.compare(b.key(&x), b.key(&y)) })
	}
}

// compareBytewise is bytes.Compare of the items' keys.
func (b *buffer) compareBytewise(x, y *item) int {
	if x.prefix != y.prefix {
		if x.prefix < y.prefix {
			return -1
		}
		return 1
	}
	if x.prefix2 != y.prefix2 {
		if x.prefix2 < y.prefix2 {
			return -1
		}
		return 1
	}
	if x.klen <= 16 || y.klen <= 16 {
		// The prefixes held all of the shorter key (zero-padded), so it
		// is a prefix of the other.
		return int(x.klen) - int(y.klen)
	}
	return bytes.Compare(b.key(x)[16:], b.key(y)[16:])
}

// digit is byte d (0–15) of the item's key prefix.
func digit(it *item, d int) byte {
	if d < 8 {
		return byte(it.prefix >> (56 - 8*d))
	}
	return byte(it.prefix2 >> (120 - 8*d))
}

// radixSort sorts a by key, knowing that its items agree on the first d
// prefix bytes: an MSD radix sort in place (American flag sort), one byte
// per level; small buckets, and items whose 16 prefix bytes are equal, by
// comparison. Unlike a comparison sort it has no unpredictable branch per
// comparison, and a byte every item shares costs one counting pass.
func (b *buffer) radixSort(a []item, d int) {
	for {
		if len(a) <= 32 {
			b.insertionSort(a)
			return
		}
		if d == 16 {
			b.tieSort(a)
			return
		}
		var count [256]int
		for i := range a {
			count[digit(&a[i], d)]++
		}
		if count[digit(&a[0], d)] == len(a) {
			d++ // one bucket: nothing to move
			continue
		}
		var next, end [256]int
		sum := 0
		for k, c := range count {
			next[k] = sum
			sum += c
			end[k] = sum
		}
		for k := range 256 {
			for next[k] < end[k] {
				// carry the item at the bucket's next slot to its own
				// bucket, bringing back the one found there, until one
				// belongs here
				it := a[next[k]]
				for dk := int(digit(&it, d)); dk != k; dk = int(digit(&it, d)) {
					a[next[dk]], it = it, a[next[dk]]
					next[dk]++
				}
				a[next[k]] = it
				next[k]++
			}
		}
		start := 0
		for _, c := range count {
			if c > 1 {
				b.radixSort(a[start:start+c], d+1)
			}
			start += c
		}
		return
	}
}

// insertionSort sorts a small bucket: each item moves down past the
// larger ones (one copy per step, not a swap), compared on the first
// prefix inline.
func (b *buffer) insertionSort(a []item) {
	for i := 1; i < len(a); i++ {
		x := a[i]
		j := i
		for ; j > 0 && b.itemBelow(&x, &a[j-1]); j-- {
			a[j] = a[j-1]
		}
		a[j] = x
	}
}

// itemBelow is compareBytewise(x, y) < 0.
func (b *buffer) itemBelow(x, y *item) bool {
	if x.prefix != y.prefix {
		return x.prefix < y.prefix
	}
	return b.compareBytewise(x, y) < 0
}

// tieSort sorts items whose 16 prefix bytes are equal: nothing to do when
// every key has the same length of at most 16 (they are all equal).
func (b *buffer) tieSort(a []item) {
	for i := 1; i < len(a); i++ {
		if a[i].klen != a[0].klen || a[i].klen > 16 {
			slices.SortFunc(a, func(x, y item) int { return b.compareBytewise(&x, &y) })
			return
		}
	}
}

// reset empties the buffer, keeping its memory for the next records.
func (b *buffer) reset() {
	for p := range b.parts {
		b.parts[p].reset()
	}
	b.chunks, b.records, b.bytes = nil, 0, 0
	b.order = Order{}
}

// stream returns the records of partition p, sorted if sort was called.
// The stream of a sorted partition is valid until the next call.
func (b *buffer) stream(p int) Stream {
	if p >= len(b.parts) {
		return &bufferStream{}
	}
	l := &b.parts[p]
	if !b.order.Sorted() || l.n <= 1 {
		return &bufferStream{chunks: l.chunks, blocks: l.items()}
	}
	if cap(b.scratch) < l.n {
		b.scratch = make([]item, 0, max(l.n, b.reserved)) // charged as reserved grew
	}
	a := b.scratch[:0]
	for _, blk := range l.items() {
		a = append(a, blk...)
	}
	b.chunks = l.chunks
	b.sortItems(a)
	return &bufferStream{chunks: l.chunks, items: a, gather: true}
}

// gatherAhead is how many records ahead of the one returned a sorted
// stream prefetches: enough misses in flight to cover a cache miss at the
// cost of a record's copy.
const gatherAhead = 16

type bufferStream struct {
	chunks [][]byte // the partition's
	gather bool     // items are in key order, not in the chunks' order
	items  []item
	blocks [][]item // the blocks after items
}

func (s *bufferStream) Next() ([]byte, []byte, error) {
	for len(s.items) == 0 {
		if len(s.blocks) == 0 {
			return nil, nil, io.EOF
		}
		s.items, s.blocks = s.blocks[0], s.blocks[1:]
	}
	if s.gather && len(s.items) > gatherAhead {
		ahead := &s.items[gatherAhead]
		if c := s.chunks[ahead.chunk]; int(ahead.off) < len(c) {
			prefetch(&c[ahead.off])
		}
	}
	it := &s.items[0]
	s.items = s.items[1:]
	c := s.chunks[it.chunk][it.off:]
	return c[:it.klen:it.klen], c[it.klen : it.klen+it.vlen], nil
}
