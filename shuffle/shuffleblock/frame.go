package shuffleblock

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// Compression is the codec of a frame's payload.
type Compression uint8

// Compressions; S2 is the default (flint.shuffle.compress.codec).
const (
	None Compression = 0
	S2   Compression = 1
	Zstd Compression = 2
)

// ParseCompression reads flint.shuffle.compress.codec: s2, zstd or none.
func ParseCompression(name string) (Compression, error) {
	switch strings.ToLower(name) {
	case "s2", "":
		return S2, nil
	case "zstd":
		return Zstd, nil
	case "none":
		return None, nil
	}
	return 0, fmt.Errorf("shuffleblock: unknown compression codec %q (want s2, zstd or none)", name)
}

func (c Compression) String() string {
	switch c {
	case None:
		return "none"
	case S2:
		return "s2"
	case Zstd:
		return "zstd"
	}
	return fmt.Sprintf("compression(%d)", uint8(c))
}

const (
	// HeaderSize is the size of a frame header.
	HeaderSize = 13
	// DefaultFrameSize is the decoded size at which a frame is cut.
	DefaultFrameSize = 64 << 10
	// MaxFrameSize bounds a frame's decoded payload (a single record may
	// exceed the frame size, not this).
	MaxFrameSize = 256 << 20
	magic        = 0xF0
)

// ErrCorrupt is wrapped by every error about bytes that are not a valid
// frame, record or index.
var ErrCorrupt = errors.New("shuffleblock: corrupt shuffle data")

// ErrChecksum is wrapped (with ErrCorrupt) when a frame's CRC-32C does not
// match: the bytes changed on disk or on the wire.
var ErrChecksum = errors.New("shuffleblock: checksum mismatch")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var (
	zstdOnce sync.Once
	zstdEnc  *zstd.Encoder
	zstdDec  *zstd.Decoder
	zstdErr  error
)

func zstdCodec() (*zstd.Encoder, *zstd.Decoder, error) {
	zstdOnce.Do(func() {
		zstdEnc, zstdErr = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if zstdErr == nil {
			zstdDec, zstdErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(MaxFrameSize))
		}
	})
	return zstdEnc, zstdDec, zstdErr
}

// appendFrame appends raw as one frame compressed with c to dst.
func appendFrame(dst, raw []byte, c Compression) ([]byte, error) {
	at := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	switch c {
	case S2:
		dst = slices.Grow(dst, s2.MaxEncodedLen(len(raw)))
		dst = dst[:at+HeaderSize+s2.MaxEncodedLen(len(raw))]
		n := len(s2.Encode(dst[at+HeaderSize:], raw))
		dst = dst[:at+HeaderSize+n]
	case Zstd:
		enc, _, err := zstdCodec()
		if err != nil {
			return dst[:at], fmt.Errorf("shuffleblock: zstd: %w", err)
		}
		dst = enc.EncodeAll(raw, dst)
	default:
		c = None
	}
	if c != None && len(dst)-at-HeaderSize >= len(raw) {
		c, dst = None, dst[:at+HeaderSize]
	}
	if c == None {
		dst = append(dst, raw...)
	}
	h := dst[at : at+HeaderSize]
	h[0] = magic | byte(c)
	binary.LittleEndian.PutUint32(h[1:], uint32(len(raw)))
	binary.LittleEndian.PutUint32(h[5:], uint32(len(dst)-at-HeaderSize))
	crc := crc32.Update(crc32.Checksum(h[:9], castagnoli), castagnoli, dst[at+HeaderSize:])
	binary.LittleEndian.PutUint32(h[9:], crc)
	return dst, nil
}

// header is a parsed frame header.
type header struct {
	comp      Compression
	raw, size int
	crc       uint32
}

func parseHeader(h []byte) (header, error) {
	if h[0]&0xF0 != magic || Compression(h[0]&0x0F) > Zstd {
		return header{}, fmt.Errorf("%w: bad frame header byte %#x", ErrCorrupt, h[0])
	}
	raw := binary.LittleEndian.Uint32(h[1:])
	size := binary.LittleEndian.Uint32(h[5:])
	if raw > MaxFrameSize || size > MaxFrameSize+MaxFrameSize/8 {
		return header{}, fmt.Errorf("%w: frame of %d bytes (%d stored) is over the %d limit", ErrCorrupt, raw, size, MaxFrameSize)
	}
	return header{comp: Compression(h[0] & 0x0F), raw: int(raw), size: int(size), crc: binary.LittleEndian.Uint32(h[9:])}, nil
}

func (h header) check(hdr, payload []byte) error {
	if crc32.Update(crc32.Checksum(hdr[:9], castagnoli), castagnoli, payload) != h.crc {
		return fmt.Errorf("%w: %w", ErrCorrupt, ErrChecksum)
	}
	return nil
}

// decode decompresses a checked payload into dst (reused if big enough).
func (h header) decode(dst, payload []byte) ([]byte, error) {
	switch h.comp {
	case None:
		if len(payload) != h.raw {
			return nil, fmt.Errorf("%w: stored frame of %d bytes says %d", ErrCorrupt, len(payload), h.raw)
		}
		return payload, nil
	case S2:
		n, err := s2.DecodedLen(payload)
		if err != nil || n != h.raw {
			return nil, fmt.Errorf("%w: s2 frame decodes to %d bytes, header says %d (%v)", ErrCorrupt, n, h.raw, err)
		}
		if cap(dst) < n {
			dst = make([]byte, n)
		}
		out, err := s2.Decode(dst[:n], payload)
		if err != nil {
			return nil, fmt.Errorf("%w: s2: %w", ErrCorrupt, err)
		}
		return out, nil
	default:
		_, dec, err := zstdCodec()
		if err != nil {
			return nil, fmt.Errorf("shuffleblock: zstd: %w", err)
		}
		out, err := dec.DecodeAll(payload, dst[:0])
		if err != nil || len(out) != h.raw {
			return nil, fmt.Errorf("%w: zstd frame decodes to %d bytes, header says %d (%v)", ErrCorrupt, len(out), h.raw, err)
		}
		return out, nil
	}
}

// Verify checks that block is whole frames with matching checksums,
// without decompressing them. A fetcher calls it before a block is used.
func Verify(block []byte) error {
	for off := 0; off < len(block); {
		if len(block)-off < HeaderSize {
			return fmt.Errorf("%w: %d trailing bytes at offset %d", ErrCorrupt, len(block)-off, off)
		}
		hdr := block[off : off+HeaderSize]
		h, err := parseHeader(hdr)
		if err != nil {
			return fmt.Errorf("at offset %d: %w", off, err)
		}
		end := off + HeaderSize + h.size
		if end > len(block) || end < off {
			return fmt.Errorf("%w: frame at offset %d runs past the block's %d bytes", ErrCorrupt, off, len(block))
		}
		if err := h.check(hdr, block[off+HeaderSize:end]); err != nil {
			return fmt.Errorf("frame at offset %d: %w", off, err)
		}
		off = end
	}
	return nil
}

// Writer writes records as frames. It buffers one frame; Flush ends it.
type Writer struct {
	w         io.Writer
	comp      Compression
	frameSize int
	raw, out  []byte
	written   int64
}

// NewWriter writes frames of about frameSize decoded bytes (0 means
// DefaultFrameSize) compressed with c to w.
func NewWriter(w io.Writer, c Compression, frameSize int) *Writer {
	if frameSize <= 0 {
		frameSize = DefaultFrameSize
	}
	return &Writer{w: w, comp: c, frameSize: frameSize, raw: make([]byte, 0, frameSize+frameSize/4)}
}

// Append adds one record; it writes a frame when the buffer is full.
func (w *Writer) Append(key, value []byte) error {
	w.raw = binary.AppendUvarint(w.raw, uint64(len(key)))
	w.raw = append(w.raw, key...)
	w.raw = binary.AppendUvarint(w.raw, uint64(len(value)))
	w.raw = append(w.raw, value...)
	if len(w.raw) >= w.frameSize {
		return w.Flush()
	}
	return nil
}

// Flush writes the buffered records as a frame, if there are any. Call it
// at the end of each partition so that no frame spans two.
func (w *Writer) Flush() error {
	if len(w.raw) == 0 {
		return nil
	}
	if len(w.raw) > MaxFrameSize {
		return fmt.Errorf("shuffleblock: a record of more than %d bytes cannot be written", MaxFrameSize)
	}
	var err error
	if w.out, err = appendFrame(w.out[:0], w.raw, w.comp); err != nil {
		return err
	}
	w.raw = w.raw[:0]
	n, err := w.w.Write(w.out)
	w.written += int64(n)
	if err != nil {
		return fmt.Errorf("shuffleblock: write: %w", err)
	}
	return nil
}

// Written is the number of bytes written to the underlying writer.
func (w *Writer) Written() int64 { return w.written }

// Reader reads the records of a sequence of frames, one frame in memory
// at a time.
type Reader struct {
	r        io.Reader
	hdr      [HeaderSize]byte
	stored   []byte
	buf      []byte
	rec      []byte // the rest of the current frame's records
	consumed int64
}

// NewReader reads frames from r until io.EOF.
func NewReader(r io.Reader) *Reader { return &Reader{r: r} }

// Reset makes the reader read from r, keeping its buffers.
func (r *Reader) Reset(src io.Reader) { *r = Reader{r: src, stored: r.stored[:0], buf: r.buf[:0]} }

// Next returns the next record, valid until the following call, or
// io.EOF after the last one.
func (r *Reader) Next() (key, value []byte, err error) {
	for len(r.rec) == 0 {
		if err := r.frame(); err != nil {
			return nil, nil, err
		}
	}
	key, rest, err := field(r.rec)
	if err != nil {
		return nil, nil, err
	}
	value, rest, err = field(rest)
	if err != nil {
		return nil, nil, err
	}
	r.rec = rest
	return key, value, nil
}

func field(b []byte) ([]byte, []byte, error) {
	n, h := binary.Uvarint(b)
	if h <= 0 || n > uint64(len(b)-h) {
		return nil, nil, fmt.Errorf("%w: record field runs past its frame", ErrCorrupt)
	}
	return b[h : h+int(n)], b[h+int(n):], nil
}

func (r *Reader) frame() error {
	if _, err := io.ReadFull(r.r, r.hdr[:]); err != nil {
		if err == io.EOF {
			return io.EOF
		}
		return r.short(err)
	}
	h, err := parseHeader(r.hdr[:])
	if err != nil {
		return err
	}
	if cap(r.stored) < h.size {
		r.stored = make([]byte, h.size)
	}
	r.stored = r.stored[:h.size]
	if _, err := io.ReadFull(r.r, r.stored); err != nil {
		return r.short(err)
	}
	if err := h.check(r.hdr[:], r.stored); err != nil {
		return err
	}
	r.consumed += int64(HeaderSize + h.size)
	out, err := h.decode(r.buf, r.stored)
	if err != nil {
		return err
	}
	if h.comp != None {
		r.buf = out
	}
	r.rec = out
	return nil
}

func (r *Reader) short(err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
		return fmt.Errorf("%w: truncated frame after %d bytes", ErrCorrupt, r.consumed)
	}
	return fmt.Errorf("shuffleblock: read: %w", err)
}
