package recordcodec

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"encoding/gob"
	"fmt"
)

// kvCodec is uvarint(len(key)) key value.
type kvCodec[K, V any] struct {
	key   Codec[K]
	value Codec[V]
}

// Pair is the codec of KV[K, V] from the codecs of its parts, for a key
// codec other than For's (Ordered, say).
func Pair[K, V any](key Codec[K], value Codec[V]) Codec[KV[K, V]] {
	return kvCodec[K, V]{key: key, value: value}
}

func (c kvCodec[K, V]) Append(dst []byte, v KV[K, V]) ([]byte, error) {
	// Reserve one byte for the key's length; most keys are under 128
	// bytes, and a longer one moves the key once.
	at := len(dst)
	dst = append(dst, 0)
	dst, err := c.key.Append(dst, v.Key)
	if err != nil {
		return dst, err
	}
	if n := len(dst) - at - 1; n < 0x80 {
		dst[at] = byte(n)
	} else {
		var hdr [binary.MaxVarintLen64]byte
		h := binary.PutUvarint(hdr[:], uint64(n))
		dst = append(dst, hdr[:h-1]...)
		copy(dst[at+h:], dst[at+1:at+1+n])
		copy(dst[at:], hdr[:h])
	}
	return c.value.Append(dst, v.Value)
}

func (c kvCodec[K, V]) Decode(src []byte) (KV[K, V], error) {
	var kv KV[K, V]
	n, h := binary.Uvarint(src)
	if h <= 0 || n > uint64(len(src)-h) {
		return kv, corrupt("pair's key length")
	}
	var err error
	if kv.Key, err = c.key.Decode(src[h : h+int(n)]); err != nil {
		return kv, err
	}
	kv.Value, err = c.value.Decode(src[h+int(n):])
	return kv, err
}

func (c kvCodec[K, V]) Name() string {
	return "kv(" + c.key.Name() + "," + c.value.Name() + ")"
}

// binaryCodec uses T's MarshalBinary and (*T).UnmarshalBinary.
type binaryCodec[T any] struct{}

func (binaryCodec[T]) Append(dst []byte, v T) ([]byte, error) {
	b, err := any(v).(encoding.BinaryMarshaler).MarshalBinary()
	if err != nil {
		return dst, fmt.Errorf("recordcodec: %s.MarshalBinary: %w", typeName[T](), err)
	}
	return append(dst, b...), nil
}

func (binaryCodec[T]) Decode(src []byte) (T, error) {
	var v T
	if err := any(&v).(encoding.BinaryUnmarshaler).UnmarshalBinary(bytes.Clone(src)); err != nil {
		return v, fmt.Errorf("%w: %s.UnmarshalBinary: %w", ErrCorrupt, typeName[T](), err)
	}
	return v, nil
}

func (binaryCodec[T]) Name() string { return "binary" }

// gobCodec writes one self-describing gob stream per value.
type gobCodec[T any] struct{}

func (gobCodec[T]) Append(dst []byte, v T) ([]byte, error) {
	w := appendWriter{dst}
	if err := gob.NewEncoder(&w).Encode(&v); err != nil {
		return dst, fmt.Errorf("recordcodec: gob of %s: %w", typeName[T](), err)
	}
	return w.b, nil
}

func (gobCodec[T]) Decode(src []byte) (T, error) {
	var v T
	if err := gob.NewDecoder(bytes.NewReader(src)).Decode(&v); err != nil {
		return v, fmt.Errorf("%w: gob of %s: %w", ErrCorrupt, typeName[T](), err)
	}
	return v, nil
}

func (gobCodec[T]) Name() string { return "gob" }

type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// Gob returns the gob codec for T whatever For would choose: the baseline
// the typed paths are measured against.
func Gob[T any]() Codec[T] { return gobCodec[T]{} }
