package shuffle

import "sync"

// Map tasks follow one another on an executor, each filling a buffer of
// about the same size: the largest chunks and item blocks, where nearly
// all of a buffer's bytes are, go back to these pools when a writer ends
// and the next writer takes them, instead of allocating (and zeroing) its
// buffer anew and leaving the old one to the collector. A pooled chunk is
// not charged to any grant; the pools hold at most what the collector has
// not yet freed (sync.Pool drops what two collections found unused).
var (
	chunkPool sync.Pool // *[pooledChunk]byte
	blockPool sync.Pool // *[blockItems]item
)

// pooledChunk is the size of the chunks that are recycled: the default
// largest chunk.
const pooledChunk = 64 << 10

// newChunk is a chunk of n bytes; its contents are undefined.
func newChunk(n int) []byte {
	if n == pooledChunk {
		if c, ok := chunkPool.Get().(*[pooledChunk]byte); ok {
			return c[:]
		}
	}
	return make([]byte, n)
}

// newBlock is a block of n items (length n); its contents are undefined.
func newBlock(n int) []item {
	if n == blockItems {
		if b, ok := blockPool.Get().(*[blockItems]item); ok {
			return b[:]
		}
	}
	return make([]item, n)
}

// recycle gives the buffer's largest chunks and blocks to the next
// writer; the buffer must not be used afterwards.
func (b *buffer) recycle() {
	for p := range b.parts {
		l := &b.parts[p]
		for _, c := range l.chunks {
			if cap(c) == pooledChunk {
				chunkPool.Put((*[pooledChunk]byte)(c[:pooledChunk]))
			}
		}
		for _, blk := range l.blocks {
			if cap(blk) == blockItems {
				blockPool.Put((*[blockItems]item)(blk[:blockItems]))
			}
		}
	}
	*b = buffer{}
}
