package dataset

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/klauspost/compress/s2"
)

// errCorruptBroadcast is wrapped by every error reading a broadcast's
// file.
var errCorruptBroadcast = errors.New("corrupt broadcast file")

// broadcastMagic starts a broadcast file. The file is the magic, the
// number of chunks (uvarint), then per chunk its uncompressed length, its
// compressed length (uvarints), the SHA-256 of the compressed bytes and
// those bytes (s2 blocks): a damaged chunk is found by its checksum and
// named, before anything is decompressed from it.
const broadcastMagic = "FLINTBC1"

// maxBroadcastChunks bounds the chunk count a file may claim.
const maxBroadcastChunks = 1 << 20

// encodeChunks compresses raw in chunks of at most chunk bytes.
func encodeChunks(raw []byte, chunk int) []byte {
	n := (len(raw) + chunk - 1) / chunk
	out := append([]byte(nil), broadcastMagic...)
	out = binary.AppendUvarint(out, uint64(n))
	for i := range n {
		part := raw[i*chunk : min(len(raw), (i+1)*chunk)]
		comp := s2.Encode(nil, part)
		out = binary.AppendUvarint(out, uint64(len(part)))
		out = binary.AppendUvarint(out, uint64(len(comp)))
		sum := sha256.Sum256(comp)
		out = append(out, sum[:]...)
		out = append(out, comp...)
	}
	return out
}

// decodeChunks is encodeChunks' inverse; every chunk is checked against
// its SHA-256 and its declared length.
func decodeChunks(enc []byte) ([]byte, error) {
	rest, ok := bytes.CutPrefix(enc, []byte(broadcastMagic))
	if !ok {
		return nil, fmt.Errorf("%w: no %s header", errCorruptBroadcast, broadcastMagic)
	}
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > maxBroadcastChunks {
		return nil, fmt.Errorf("%w: bad chunk count", errCorruptBroadcast)
	}
	rest = rest[k:]
	var out []byte
	for i := range int(n) {
		rawLen, k1 := binary.Uvarint(rest)
		if k1 <= 0 {
			return nil, fmt.Errorf("%w: chunk %d of %d: bad length", errCorruptBroadcast, i+1, n)
		}
		compLen, k2 := binary.Uvarint(rest[k1:])
		if k2 <= 0 || compLen > uint64(len(rest)) || rawLen > broadcastChunk*4 {
			return nil, fmt.Errorf("%w: chunk %d of %d: bad length", errCorruptBroadcast, i+1, n)
		}
		rest = rest[k1+k2:]
		if uint64(len(rest)) < sha256.Size+compLen {
			return nil, fmt.Errorf("%w: chunk %d of %d: truncated", errCorruptBroadcast, i+1, n)
		}
		want, comp := rest[:sha256.Size], rest[sha256.Size:sha256.Size+compLen]
		rest = rest[sha256.Size+compLen:]
		if got := sha256.Sum256(comp); !bytes.Equal(got[:], want) {
			return nil, fmt.Errorf("%w: chunk %d of %d: SHA-256 mismatch", errCorruptBroadcast, i+1, n)
		}
		if dl, err := s2.DecodedLen(comp); err != nil || uint64(dl) != rawLen {
			return nil, fmt.Errorf("%w: chunk %d of %d: decompressed length is not the declared %d bytes", errCorruptBroadcast, i+1, n, rawLen)
		}
		start := len(out)
		out = append(out, make([]byte, rawLen)...)
		if _, err := s2.Decode(out[start:], comp); err != nil {
			return nil, fmt.Errorf("%w: chunk %d of %d: %w", errCorruptBroadcast, i+1, n, err)
		}
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the last chunk", errCorruptBroadcast, len(rest))
	}
	return out, nil
}
