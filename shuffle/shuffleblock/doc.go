// Package shuffleblock is the on-disk and on-the-wire format of shuffle
// data: frames of records, and the index of a map task's data file.
//
// A map task writes one data file: its reduce partitions back to back,
// each partition a sequence of frames (an empty partition is no bytes),
// and one index file of P+1 offsets, so the block of reduce partition r is
// the byte range [offset[r], offset[r+1]) of the data file — the layout of
// Spark's IndexShuffleBlockResolver. A block is served, fetched and merged
// as is: it is a run of records sorted the way the writer sorted them.
//
// A frame is a 13-byte header and a payload:
//
//	byte 0      0xF0 | compression (0 none, 1 s2, 2 zstd)
//	bytes 1–4   decoded payload length, little-endian
//	bytes 5–8   stored payload length, little-endian
//	bytes 9–12  CRC-32C (Castagnoli) of bytes 0–8 and the stored payload
//
// The decoded payload is records, each uvarint(len key) key
// uvarint(len value) value. A record never straddles frames; the writer
// cuts a frame once its records reach the frame size (64 KiB by default),
// so a reader holds one frame per open stream. A frame whose compressed
// form is not smaller is stored uncompressed.
//
// The index file is "FLSHIDX1", the partition count P (uint32), P+1
// offsets (uint64), all big-endian, and a CRC-32C of everything before
// it. Decoders check every length against its bounds and every checksum
// before trusting a byte: corrupt or truncated input is ErrCorrupt, never
// a panic or an allocation sized by the input. Verify checks a fetched
// block's checksums without decompressing it.
package shuffleblock
