package mesoshttp

import (
	"errors"
	"net/http"

	"github.com/gogo/protobuf/proto"
)

// DecodeRequest runs the checks every v1 API call goes through, in Mesos'
// order, and decodes the body into m. On failure it has already written
// the answer (405 non-POST, 400 missing Content-Type, 415 other media
// type, 400 oversized or unparseable body) and returns ok=false.
func DecodeRequest(w http.ResponseWriter, r *http.Request, maxBody int64, m proto.Message) (mt MediaType, ok bool) {
	if r.Method != http.MethodPost {
		MethodNotAllowed(w, r.Method, http.MethodPost)
		return "", false
	}
	mt, err := ContentType(r.Header)
	switch {
	case errors.Is(err, ErrNoContentType):
		BadRequest(w, "Expecting 'Content-Type' to be present")
		return "", false
	case err != nil:
		UnsupportedMediaType(w, r.Header.Get("Content-Type"))
		return "", false
	}
	body, err := ReadBody(r, maxBody)
	if err != nil {
		BadRequest(w, "Failed to read body: "+err.Error())
		return "", false
	}
	if err := Decode(mt, body, m); err != nil {
		BadRequest(w, "Failed to parse body into Call: "+err.Error())
		return "", false
	}
	return mt, true
}
