package master

import (
	"net/http"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/mesoshttp"
)

// answer is the HTTP outcome of a call handled under the lock.
type answer struct {
	code int
	msg  string
}

var accepted = answer{code: http.StatusAccepted}

func badRequest(msg string) answer { return answer{http.StatusBadRequest, msg} }

func (a answer) write(w http.ResponseWriter) {
	if a.code == http.StatusAccepted {
		mesoshttp.Accepted(w)
		return
	}
	mesoshttp.Error(w, a.code, a.msg)
}

// serveScheduler is POST /api/v1/scheduler.
func (m *Master) serveScheduler(w http.ResponseWriter, r *http.Request) {
	principal, ok := m.authenticate(w, r)
	if !ok {
		return
	}
	if m.recovering() { // before any other check, as Mesos
		mesoshttp.Error(w, http.StatusServiceUnavailable, "Master has not finished recovery")
		return
	}
	var call scheduler.Call
	mt, ok := mesoshttp.DecodeRequest(w, r, 0, &call)
	if !ok {
		m.countBad()
		return
	}
	if err := validateCall(&call); err != nil {
		m.countBad()
		mesoshttp.BadRequest(w, err.Error())
		return
	}
	m.log.WithFields(logrus.Fields{"type": call.GetType().String(), "framework": call.GetFrameworkID().GetValue()}).Debug("scheduler call")
	if call.GetType() == scheduler.Call_SUBSCRIBE {
		m.subscribe(w, r, mt, principal, &call)
		return
	}
	m.mu.Lock()
	m.inc("master/messages_"+lower(call.GetType().String()), 1)
	f, a := m.checkCaller(r, principal, &call)
	if a.code == 0 {
		if call.GetType() == scheduler.Call_UPDATE_FRAMEWORK {
			a = m.updateFramework(f, principal, call.UpdateFramework)
			if a.code == 0 {
				m.mu.Unlock()
				mesoshttp.OKEmpty(w, mt)
				return
			}
		} else {
			a = m.dispatch(f, &call)
		}
	}
	m.mu.Unlock()
	a.write(w)
}

func (m *Master) countBad() {
	m.mu.Lock()
	m.inc("master/messages_invalid_calls", 1)
	m.mu.Unlock()
}

// checkCaller finds the calling framework and checks its subscription, in
// Mesos' order: 400 unknown, 403 not subscribed, 400 wrong stream id.
// Callers hold m.mu.
func (m *Master) checkCaller(r *http.Request, principal string, call *scheduler.Call) (*framework, answer) {
	id := call.GetFrameworkID().GetValue()
	f := m.fws[id]
	if f == nil {
		return nil, badRequest("Framework cannot be found")
	}
	if principal != "" && principal != f.info.GetPrincipal() {
		return nil, badRequest("Authenticated principal '" + principal + "' does not match principal '" +
			f.info.GetPrincipal() + "' set in `FrameworkInfo`")
	}
	if f.sub == nil {
		return nil, answer{http.StatusForbidden, "Framework is not subscribed"}
	}
	sid := r.Header.Get("Mesos-Stream-Id")
	if sid == "" {
		return nil, badRequest("All non-subscribe calls should include the 'Mesos-Stream-Id' header")
	}
	if sid != f.sub.streamID {
		return nil, badRequest("The stream ID '" + sid + "' included in this request didn't match the stream ID currently associated with framework ID " + id)
	}
	return f, answer{}
}

// dispatch runs an async call. Callers hold m.mu.
func (m *Master) dispatch(f *framework, call *scheduler.Call) answer {
	now := m.cfg.Clock.Now()
	switch call.GetType() {
	case scheduler.Call_TEARDOWN:
		m.removeFramework(f, now)
	case scheduler.Call_ACCEPT:
		m.accept(f, call.Accept, now)
	case scheduler.Call_DECLINE:
		m.decline(f, call.Decline)
	case scheduler.Call_ACCEPT_INVERSE_OFFERS, scheduler.Call_DECLINE_INVERSE_OFFERS:
		// Maintenance is out of scope: no inverse offers exist.
	case scheduler.Call_REVIVE:
		m.revive(f, call.Revive.GetRoles())
	case scheduler.Call_SUPPRESS:
		m.suppress(f, call.Suppress.GetRoles())
	case scheduler.Call_KILL:
		m.kill(f, call.Kill)
	case scheduler.Call_SHUTDOWN:
		m.shutdownExecutor(f, call.Shutdown)
	case scheduler.Call_ACKNOWLEDGE:
		m.acknowledge(f, call.Acknowledge)
	case scheduler.Call_ACKNOWLEDGE_OPERATION_STATUS:
		// No offer operations with feedback exist here: nothing to ack.
	case scheduler.Call_RECONCILE:
		m.reconcile(f, call.Reconcile.GetTasks())
	case scheduler.Call_RECONCILE_OPERATIONS:
		m.reconcileOperations(f, call.ReconcileOperations)
	case scheduler.Call_MESSAGE:
		m.message(f, call.Message)
	case scheduler.Call_REQUEST:
		// Ignored, as in Mesos.
	default:
		return answer{http.StatusNotImplemented, "Unsupported call type " + call.GetType().String()}
	}
	return accepted
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// authenticate checks HTTP Basic credentials when Credentials are set.
func (m *Master) authenticate(w http.ResponseWriter, r *http.Request) (string, bool) {
	if m.cfg.Credentials == nil {
		return "", true
	}
	p, s, ok := r.BasicAuth()
	if !ok {
		mesoshttp.Unauthorized(w, Realm, "")
		return "", false
	}
	if secret, known := m.cfg.Credentials[p]; !known || secret != s {
		mesoshttp.Unauthorized(w, Realm, "")
		return "", false
	}
	return p, true
}
