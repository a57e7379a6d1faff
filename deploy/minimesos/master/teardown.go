package master

import (
	"io"
	"net/http"
	"net/url"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/mesoshttp"
)

// serveTeardown is the operator endpoint POST /teardown (also
// /master/teardown), Mesos' Master::Http::teardown: the request body is a
// query string whose frameworkId names the framework to remove, as a
// TEARDOWN call would (its tasks killed, its executors shut down). 200 once
// removed; 400 "Missing 'frameworkId' query parameter in the request body"
// or "No framework found with specified ID"; 405 for other methods. With
// Credentials it needs HTTP basic authentication. It is how an operator
// removes a framework a master keeps with no failover timer (one recovered
// from agents after a master failover, MESOS-4659).
func (m *Master) serveTeardown(w http.ResponseWriter, r *http.Request) {
	if _, ok := m.authenticate(w, r); !ok {
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		mesoshttp.Error(w, http.StatusMethodNotAllowed, "Expecting one of { 'POST' }, but received '"+r.Method+"'")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	if err != nil {
		return
	}
	values, err := url.ParseQuery(string(body))
	if err != nil {
		mesoshttp.BadRequest(w, "Unable to decode query string: "+err.Error())
		return
	}
	if !values.Has("frameworkId") {
		mesoshttp.BadRequest(w, "Missing 'frameworkId' query parameter in the request body")
		return
	}
	id := values.Get("frameworkId")
	m.mu.Lock()
	f := m.fws[id]
	if f == nil {
		m.mu.Unlock()
		mesoshttp.BadRequest(w, "No framework found with specified ID")
		return
	}
	m.log.WithFields(logrus.Fields{"framework": id, "remote": r.RemoteAddr}).Info("framework torn down by an operator (/teardown)")
	m.removeFramework(f, m.cfg.Clock.Now())
	m.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}
