package mesoshttp

import (
	"net/http"
	"strings"
)

// Error writes a Mesos error answer: the status code and a plain text body.
func Error(w http.ResponseWriter, code int, msg string) {
	h := w.Header()
	h.Del("Content-Length")
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg))
}

// BadRequest answers 400 with msg.
func BadRequest(w http.ResponseWriter, msg string) { Error(w, http.StatusBadRequest, msg) }

// Forbidden answers 403 with msg.
func Forbidden(w http.ResponseWriter, msg string) { Error(w, http.StatusForbidden, msg) }

// NotImplemented answers 501 with msg.
func NotImplemented(w http.ResponseWriter, msg string) { Error(w, http.StatusNotImplemented, msg) }

// MethodNotAllowed answers 405 with an Allow header, as libprocess does.
func MethodNotAllowed(w http.ResponseWriter, got string, allowed ...string) {
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	Error(w, http.StatusMethodNotAllowed,
		"Expecting one of { '"+strings.Join(allowed, "', '")+"' }, but received '"+got+"'")
}

// UnsupportedMediaType answers 415 for a Content-Type of neither codec.
func UnsupportedMediaType(w http.ResponseWriter, got string) {
	Error(w, http.StatusUnsupportedMediaType, "Expecting 'Content-Type' of "+
		string(JSON)+" or "+string(Protobuf)+"; got '"+got+"'")
}

// NotAcceptable answers 406 when the Accept header admits neither codec.
func NotAcceptable(w http.ResponseWriter) {
	Error(w, http.StatusNotAcceptable, "Expecting 'Accept' to allow '"+
		string(Protobuf)+"' or '"+string(JSON)+"'")
}

// Unauthorized answers 401 with the Basic challenge for realm.
func Unauthorized(w http.ResponseWriter, realm, msg string) {
	w.Header().Set("WWW-Authenticate", `Basic realm="`+realm+`"`)
	Error(w, http.StatusUnauthorized, msg)
}

// Accepted answers 202 with an empty body (every valid asynchronous call).
func Accepted(w http.ResponseWriter) {
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusAccepted)
}

// OKEmpty answers 200 with an empty body and the given Content-Type
// (UPDATE_FRAMEWORK: mesos-go rejects a 200 without a Content-Type).
func OKEmpty(w http.ResponseWriter, mt MediaType) {
	w.Header().Set("Content-Type", string(mt))
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
}
