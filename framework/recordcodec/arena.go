package recordcodec

import (
	"encoding/binary"
	"unsafe"
)

// ArenaChunk is the size of the chunks an Arena carves strings from, and
// so the most memory one retained string can keep alive (its chunk's
// other strings are garbage otherwise). Strings longer than a quarter of
// it get an allocation of their own.
const ArenaChunk = 2 << 10

// Arena copies decoded strings into shared, never-reused chunks: one
// allocation per ArenaChunk bytes instead of one per string. The strings
// it returns are ordinary immutable strings; a chunk is freed by the
// garbage collector once none of its strings is referenced. An Arena is
// not safe for concurrent use; the zero value is ready.
type Arena struct{ free []byte }

// String returns a string with b's bytes that does not alias b.
func (a *Arena) String(b []byte) string {
	n := len(b)
	if n == 0 {
		return ""
	}
	if n > ArenaChunk/4 {
		return string(b)
	}
	if len(a.free) < n {
		a.free = make([]byte, ArenaChunk)
	}
	dst := a.free[:n:n]
	a.free = a.free[n:]
	copy(dst, b)
	return unsafe.String(&dst[0], n)
}

// arenaDecoder is a Codec that may decode into an Arena: when
// arenaCapable says it does (a pair does if either part does).
type arenaDecoder[T any] interface {
	decodeIn(src []byte, a *Arena) (T, error)
	arenaCapable() bool
}

// decodeIn decodes src with c, into a when c can.
func decodeIn[T any](c Codec[T], src []byte, a *Arena) (T, error) {
	if d, ok := c.(arenaDecoder[T]); ok && d.arenaCapable() {
		return d.decodeIn(src, a)
	}
	return c.Decode(src)
}

func capable[T any](c Codec[T]) bool {
	d, ok := c.(arenaDecoder[T])
	return ok && d.arenaCapable()
}

func (stringCodec) decodeIn(src []byte, a *Arena) (string, error) { return a.String(src), nil }
func (stringCodec) arenaCapable() bool                            { return true }

func (c castCodec[T, U]) decodeIn(src []byte, a *Arena) (T, error) {
	u, err := decodeIn(c.inner, src, a)
	return *(*T)(unsafe.Pointer(&u)), err
}

func (c castCodec[T, U]) arenaCapable() bool { return capable(c.inner) }

func (c kvCodec[K, V]) decodeIn(src []byte, a *Arena) (KV[K, V], error) {
	var kv KV[K, V]
	n, h := binary.Uvarint(src)
	if h <= 0 || n > uint64(len(src)-h) {
		return kv, corrupt("pair's key length")
	}
	var err error
	if kv.Key, err = decodeIn(c.key, src[h:h+int(n)], a); err != nil {
		return kv, err
	}
	kv.Value, err = decodeIn(c.value, src[h+int(n):], a)
	return kv, err
}

func (c kvCodec[K, V]) arenaCapable() bool { return capable(c.key) || capable(c.value) }

// Decoder returns c's decoding function with strings carved from a: for
// strings, named string types and KV pairs of them, one allocation per
// ArenaChunk bytes instead of one per string; for every other codec,
// c.Decode. Decoded values never alias src.
func Decoder[T any](c Codec[T], a *Arena) func(src []byte) (T, error) {
	if d, ok := c.(arenaDecoder[T]); ok && d.arenaCapable() {
		return func(src []byte) (T, error) { return d.decodeIn(src, a) }
	}
	return c.Decode
}
