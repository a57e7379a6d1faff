package mesoshttp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/gogo/protobuf/proto"
)

// MaxRecordSize is the largest record ReadRecord accepts by default: the
// 4 MiB cap mesos-go's RecordIO reader applies.
const MaxRecordSize = 4 << 20

// Errors of the RecordIO reader.
var (
	ErrRecordTooLarge = errors.New("mesoshttp: recordio record too large")
	ErrBadFraming     = errors.New("mesoshttp: malformed recordio length")
)

// AppendRecord appends one RecordIO record (<decimal length>\n<bytes>) to dst.
func AppendRecord(dst, rec []byte) []byte {
	dst = strconv.AppendInt(dst, int64(len(rec)), 10)
	dst = append(dst, '\n')
	return append(dst, rec...)
}

// RecordReader reads RecordIO records, refusing lengths above a cap
// before allocating anything.
type RecordReader struct {
	r   *bufio.Reader
	max int
}

// NewRecordReader returns a reader of records of at most max bytes
// (max <= 0 means MaxRecordSize).
func NewRecordReader(r io.Reader, max int) *RecordReader {
	if max <= 0 {
		max = MaxRecordSize
	}
	return &RecordReader{r: bufio.NewReader(r), max: max}
}

// ReadRecord returns the next record; io.EOF at a clean end of stream,
// io.ErrUnexpectedEOF inside a record.
func (rr *RecordReader) ReadRecord() ([]byte, error) {
	var n int
	digits := 0
	for {
		c, err := rr.r.ReadByte()
		if err != nil {
			if err == io.EOF && digits > 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if c == '\n' {
			break
		}
		if c < '0' || c > '9' || digits >= 19 {
			return nil, ErrBadFraming
		}
		digits++
		n = n*10 + int(c-'0')
		if n > rr.max {
			return nil, fmt.Errorf("%w: %d+ bytes (max %d)", ErrRecordTooLarge, n, rr.max)
		}
	}
	if digits == 0 {
		return nil, ErrBadFraming
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(rr.r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// Stream is a RecordIO event stream on an HTTP response (the answer to a
// SUBSCRIBE). Each Send writes one record and flushes it. It is safe for
// concurrent use; after Close or a write error every Send fails.
type Stream struct {
	mu     sync.Mutex
	w      io.Writer
	f      http.Flusher
	mt     MediaType
	closed bool
	err    error
	buf    []byte
}

// ErrStreamClosed is returned by Send after Close.
var ErrStreamClosed = errors.New("mesoshttp: stream closed")

// StartStream answers a request with 200 and a chunked RecordIO stream of
// mt-encoded messages: Content-Type exactly mt, no Content-Length, extra
// headers (e.g. Mesos-Stream-Id) set first, headers flushed at once.
func StartStream(w http.ResponseWriter, mt MediaType, headers map[string]string) *Stream {
	h := w.Header()
	for k, v := range headers {
		h.Set(k, v)
	}
	h.Set("Content-Type", string(mt))
	h.Del("Content-Length")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	s := &Stream{w: w, f: f, mt: mt}
	if f != nil {
		f.Flush()
	}
	return s
}

// MediaType is the stream's codec.
func (s *Stream) MediaType() MediaType { return s.mt }

// Send encodes m and writes it as one record, then flushes.
func (s *Stream) Send(m proto.Message) error {
	b, err := Encode(s.mt, m)
	if err != nil {
		return fmt.Errorf("mesoshttp: encoding event: %w", err)
	}
	return s.SendRaw(b)
}

// SendRaw writes already encoded bytes as one record, then flushes.
func (s *Stream) SendRaw(rec []byte) (err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrStreamClosed
	}
	if s.err != nil {
		return s.err
	}
	defer func() {
		if r := recover(); r != nil { // the handler already returned
			err = ErrStreamClosed
		}
		if err != nil {
			s.err = err
		}
	}()
	s.buf = AppendRecord(s.buf[:0], rec)
	if _, err = s.w.Write(s.buf); err != nil {
		return err
	}
	if s.f != nil {
		s.f.Flush()
	}
	return nil
}

// Close marks the stream closed; later Sends fail. The caller ends the
// response by returning from its handler.
func (s *Stream) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}
