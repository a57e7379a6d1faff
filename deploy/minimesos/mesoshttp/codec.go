package mesoshttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/gogo/protobuf/proto"
)

// DefaultMaxBodySize caps request bodies (Calls carry task infos and
// messages; Mesos has no smaller limit on the scheduler API).
const DefaultMaxBodySize = 16 << 20

// ErrBodyTooLarge is returned by ReadBody when the body exceeds its cap.
var ErrBodyTooLarge = errors.New("mesoshttp: request body too large")

// ReadBody reads at most max bytes of r's body (max <= 0 means
// DefaultMaxBodySize).
func ReadBody(r *http.Request, max int64) ([]byte, error) {
	if max <= 0 {
		max = DefaultMaxBodySize
	}
	if r.Body == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	if err != nil {
		return nil, fmt.Errorf("mesoshttp: reading body: %w", err)
	}
	if int64(len(b)) > max {
		return nil, ErrBodyTooLarge
	}
	return b, nil
}

// Decode unmarshals body, encoded as mt, into m (a mesos-go message such
// as scheduler.Call or executor.Call). JSON uses the messages' ffjson
// methods, which accept null for repeated fields and enum names.
func Decode(mt MediaType, body []byte, m proto.Message) (err error) {
	// Guard against panics in generated decoders on hostile input.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("mesoshttp: decoding %s: %v", mt, r)
		}
	}()
	switch mt {
	case Protobuf:
		err = proto.Unmarshal(body, m)
	case JSON:
		dec := json.NewDecoder(bytes.NewReader(body))
		if err = dec.Decode(m); err == nil && dec.More() {
			err = errors.New("trailing data after JSON object")
		}
	default:
		return ErrUnsupportedMediaType
	}
	if err != nil {
		return fmt.Errorf("mesoshttp: decoding %s: %w", mt, err)
	}
	return nil
}

// Encode marshals m as mt.
func Encode(mt MediaType, m proto.Message) ([]byte, error) {
	switch mt {
	case Protobuf:
		return proto.Marshal(m)
	case JSON:
		return json.Marshal(m)
	}
	return nil, ErrUnsupportedMediaType
}
