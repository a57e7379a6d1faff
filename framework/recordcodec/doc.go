// Package recordcodec turns the records of a dataset into bytes and back,
// fast: it is the per-record codec of the shuffle (map output, spills,
// fetched blocks) and of anything else that stores records by the million.
//
// For[T] picks a codec for T once, at build time:
//
//   - string, []byte, bool, the integer and float types, and named types
//     whose underlying type is one of those: raw bytes, zig-zag varints,
//     fixed-width floats — no reflection per record;
//   - KV[K, V]: the key's length, the key, the value, each part with its
//     own codec;
//   - a type implementing encoding.BinaryMarshaler (with
//     encoding.BinaryUnmarshaler on its pointer): its own methods;
//   - structs, arrays, slices, maps, pointers and complex numbers built
//     of those kinds ("struct"): a walk fixed by the type — exported
//     fields in order (gob's rule: unexported, chan and func fields are
//     not sent), maps sorted by their encoded keys, a part with
//     BinaryMarshaler or GobEncoder by its own methods;
//   - anything else (a type holding an interface, a struct with no
//     exported field): encoding/gob, one self-describing value per record.
//
// Gob is not used where a structCodec can be, because a gob stream names
// types by ids each process assigns in the order it first meets them: the
// same struct key encoded on two executors could have two encodings, be
// hashed to two partitions and be grouped as two keys — a wrong answer.
// Keys of a type that still takes the gob path (one holding an
// interface) are not grouped reliably across processes; give such a type
// a BinaryMarshaler.
//
// Ordered[T] is the codec for keys that must sort: for every cmp.Ordered
// type, bytes.Compare of two encodings agrees with cmp.Compare of the
// values (integers big-endian with the sign bit flipped, floats in the
// IEEE total order, strings as their bytes), so the shuffle sorts and
// merges keys as bytes without decoding them.
//
// Decoder(c, arena) is c's decoding function with strings (and named
// string types, inside KV pairs too) copied into an Arena's shared 2 KiB
// chunks: one allocation per chunk instead of one per string, for
// readers that decode records by the million (the shuffle's reduce side).
// A retained string keeps at most its chunk alive.
//
// Every codec but gob is deterministic in every process — one value, one
// encoding — so equal keys have equal bytes and the shuffle groups by
// bytes. Decode is
// given exactly the bytes Append produced: the framing of records is the
// caller's. Decoded strings and byte slices never alias the input. Bad
// input gets an error prefixed "recordcodec: ", never a panic.
package recordcodec
