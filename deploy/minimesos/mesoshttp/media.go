package mesoshttp

import (
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// MediaType is a media type the v1 APIs speak.
type MediaType string

// The two codecs of the Mesos v1 HTTP APIs.
const (
	Protobuf MediaType = "application/x-protobuf"
	JSON     MediaType = "application/json"
)

// Errors returned by ContentType.
var (
	// ErrNoContentType: the request has no Content-Type header (Mesos: 400).
	ErrNoContentType = errors.New("mesoshttp: expecting 'Content-Type' to be present")
	// ErrUnsupportedMediaType: the Content-Type is neither codec (Mesos: 415).
	ErrUnsupportedMediaType = errors.New("mesoshttp: unsupported media type")
)

// ContentType returns the codec of a request body from its Content-Type
// header. Parameters (e.g. charset) are ignored, as Mesos does.
func ContentType(h http.Header) (MediaType, error) {
	v := h.Get("Content-Type")
	if strings.TrimSpace(v) == "" {
		return "", ErrNoContentType
	}
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		return "", ErrUnsupportedMediaType
	}
	switch MediaType(strings.ToLower(mt)) {
	case Protobuf:
		return Protobuf, nil
	case JSON:
		return JSON, nil
	}
	return "", ErrUnsupportedMediaType
}

// Accepts reports whether an Accept header value admits mt: a missing or
// empty header accepts everything, "*/*" and "application/*" match, and a
// q-value of 0 excludes (as libprocess' Request::acceptsMediaType).
func Accepts(accept string, mt MediaType) bool {
	if strings.TrimSpace(accept) == "" {
		return true
	}
	typ, _, _ := strings.Cut(string(mt), "/")
	for _, part := range strings.Split(accept, ",") {
		fields := strings.Split(part, ";")
		r := strings.ToLower(strings.TrimSpace(fields[0]))
		if !(r == string(mt) || r == "*/*" || r == typ+"/*") {
			continue
		}
		q := 1.0
		for _, p := range fields[1:] {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil {
					f = 0
				}
				q = f
			}
		}
		if q > 0 {
			return true
		}
	}
	return false
}

// Negotiate picks the response media type for an Accept header, preferring
// JSON as Mesos does when both are acceptable. ok is false when the header
// accepts neither (Mesos: 406).
func Negotiate(accept string) (mt MediaType, ok bool) {
	if Accepts(accept, JSON) {
		return JSON, true
	}
	if Accepts(accept, Protobuf) {
		return Protobuf, true
	}
	return "", false
}
