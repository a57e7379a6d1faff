// Package codec owns how task inputs and results are turned into bytes.
//
// A task function registered with framework/task names a Codec; the driver
// encodes the function's input with it, the executor decodes the input,
// runs the function and encodes the output with the same codec, and the
// driver decodes the result. The codec's name travels in
// TaskDescription.codec so both sides agree.
//
// Gob is the default. Driver and executor run the same binary, so gob's
// Go-native, self-describing encoding needs no schema or generated code
// and handles structs, maps, slices, arrays, pointers and nested types out
// of the box, keeping int64/uint64 exact and []byte compact. JSON, by
// contrast, loses integer precision above 2^53 in interface values, base64s
// byte slices and only supports string-keyed maps. Gob's limits: only
// exported struct fields are encoded, zero values and empty slices/maps
// decode as nil/zero, values stored in interface types must be registered
// with gob.Register, and a top-level nil pointer cannot be encoded.
//
// Building a gob encoder or decoder per value costs about a microsecond
// and a dozen or more allocations, the largest per-task cost when a task's
// input or output is a plain bool, integer, float, string or []byte. For
// exactly those types (not named types like `type ID int`) GobCodec writes
// and parses gob's bytes itself: the output is byte for byte
// encoding/gob's, and any input that is not the canonical stream for the
// destination goes to encoding/gob, so values and errors are unchanged and
// either end may lack the fast path.
//
// JSON is provided for interoperability and readable payloads. Users can
// Register their own codecs (protobuf, msgpack, ...) from init(); Lookup
// finds a codec by name. All errors are prefixed "codec: ".
package codec
