package dispatcher

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"regexp"
	"strings"

	"github.com/flint-mesos/flint"
)

// MaxBinary bounds an uploaded program (1 GiB).
const MaxBinary = 1 << 30

var idRE = regexp.MustCompile(`^driver-[0-9]{14}-[0-9a-f]{4}$`)

// API is what the REST server serves; *Dispatcher implements it.
type API interface {
	Submit(req CreateRequest) (string, error)
	Status(id string) (Record, bool)
	List() []Record
	Kill(id string) (Record, error)
	Upload(sha, name string, body interface{ Read([]byte) (int, error) }) (string, error)
}

var _ API = (*Dispatcher)(nil)

// Upload stores an uploaded program (content-addressed, SHA-256 checked) and
// returns its appResource, sha256:<hex>.
func (d *Dispatcher) Upload(sha, name string, body interface{ Read([]byte) (int, error) }) (string, error) {
	if _, err := d.cfg.Binaries.Put(sha, name, body, MaxBinary); err != nil {
		return "", err
	}
	return "sha256:" + sha, nil
}

// ServerConfig configures the REST server.
type ServerConfig struct {
	// Token is the bearer token submitters present; required unless Anonymous.
	Token string
	// Anonymous serves anyone who can reach the port (an explicit choice:
	// `flint dispatcher --no-auth`).
	Anonymous bool
	// Page has what the HTML page links to.
	Page PageConfig
}

// Handler is the dispatcher's HTTP API: Spark's REST submission protocol
// (POST /v1/submissions/create, GET /v1/submissions/status/<id>, POST
// /v1/submissions/kill/<id>), GET /v1/submissions (every driver), POST
// /v1/binaries?name=N with header X-Flint-Sha256 (an upload), and the page at /.
// Every request needs "Authorization: Bearer <token>" (the page also takes
// ?token=) unless cfg.Anonymous.
func Handler(api API, cfg ServerConfig) (http.Handler, error) {
	if !cfg.Anonymous && len(cfg.Token) < 16 {
		return nil, errors.New("dispatcher: a token of at least 16 characters is required unless the server is anonymous")
	}
	sum := sha256.Sum256([]byte(cfg.Token))
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/submissions/create", func(w http.ResponseWriter, r *http.Request) {
		req, err := DecodeCreate(http.MaxBytesReader(w, r.Body, 1<<20))
		if err != nil {
			fail(w, http.StatusBadRequest, err)
			return
		}
		id, err := api.Submit(req)
		if err != nil {
			fail(w, statusOf(err), err)
			return
		}
		reply(w, http.StatusOK, CreateResponse{Action: "CreateSubmissionResponse", ServerFlintVersion: flint.Version,
			SubmissionID: id, Success: true, Message: "Driver successfully submitted as " + id})
	})
	mux.HandleFunc("GET /v1/submissions/status/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		rec, ok := api.Status(id)
		if !ok {
			reply(w, http.StatusNotFound, StatusResponse{Action: "SubmissionStatusResponse", ServerFlintVersion: flint.Version,
				SubmissionID: id, DriverState: "NOT_FOUND", Message: "no submission " + id})
			return
		}
		reply(w, http.StatusOK, statusOf2(rec))
	})
	mux.HandleFunc("GET /v1/submissions", func(w http.ResponseWriter, r *http.Request) {
		var out []StatusResponse
		for _, rec := range api.List() {
			out = append(out, statusOf2(rec))
		}
		reply(w, http.StatusOK, out)
	})
	mux.HandleFunc("POST /v1/submissions/kill/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		rec, err := api.Kill(id)
		if err != nil {
			reply(w, statusOf(err), KillResponse{Action: "KillSubmissionResponse", ServerFlintVersion: flint.Version,
				SubmissionID: id, Message: err.Error()})
			return
		}
		msg := "Kill request for " + id + " submitted"
		if rec.State == Killed {
			msg = id + " killed before it was launched"
		}
		reply(w, http.StatusOK, KillResponse{Action: "KillSubmissionResponse", ServerFlintVersion: flint.Version,
			SubmissionID: id, Success: true, Message: msg})
	})
	mux.HandleFunc("POST /v1/binaries", func(w http.ResponseWriter, r *http.Request) {
		res, err := api.Upload(r.Header.Get("X-Flint-Sha256"), r.URL.Query().Get("name"), r.Body)
		if err != nil {
			fail(w, statusOf(err), err)
			return
		}
		reply(w, http.StatusOK, map[string]string{"appResource": res})
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { servePage(w, api.List(), cfg.Page) })
	return authenticate(cfg, sum, mux), nil
}

// authenticate serves h to requests that present the token (every request when
// cfg.Anonymous).
func authenticate(cfg ServerConfig, sum [sha256.Size]byte, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !cfg.Anonymous && !authorized(r, sum) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="flint-dispatcher"`)
			fail(w, http.StatusUnauthorized, errors.New("dispatcher: unauthorised: present the dispatcher's token (Authorization: Bearer …; flint submit reads it from --token-file)"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// StandbyPrefix starts a standby's answer; clients given several dispatchers
// (mesos://h1:7077,h2:7077) recognise it and try the next.
const StandbyPrefix = "dispatcher: standby"

// StandbyHandler serves a standby dispatcher's port (one that has not won the
// ZooKeeper election): every authenticated request is answered 503 Service
// Unavailable, naming the leader's address when leader knows it.
func StandbyHandler(cfg ServerConfig, leader func() (string, error)) (http.Handler, error) {
	if !cfg.Anonymous && len(cfg.Token) < 16 {
		return nil, errors.New("dispatcher: a token of at least 16 characters is required unless the server is anonymous")
	}
	sum := sha256.Sum256([]byte(cfg.Token))
	return authenticate(cfg, sum, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		msg := StandbyPrefix + ": this dispatcher waits to lead (ZooKeeper election)"
		if addr, err := leader(); err == nil && addr != "" {
			msg += "; the leader is " + addr
		}
		fail(w, http.StatusServiceUnavailable, errors.New(msg))
	})), nil
}

func authorized(r *http.Request, sum [sha256.Size]byte) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok && r.Method == http.MethodGet {
		tok = r.URL.Query().Get("token")
	}
	got := sha256.Sum256([]byte(tok))
	return tok != "" && subtle.ConstantTimeCompare(got[:], sum[:]) == 1
}

func statusOf2(rec Record) StatusResponse {
	sum := rec.Spec.Summary()
	resp := StatusResponse{Action: "SubmissionStatusResponse", DriverState: rec.State, Message: rec.Message,
		ServerFlintVersion: flint.Version, SubmissionID: rec.ID, Success: true, WorkerID: rec.AgentID,
		WorkerHostPort: rec.Host, TaskID: rec.TaskID, Attempts: rec.Attempts, Driver: &sum}
	if rec.Killing {
		resp.Message = "kill requested"
	}
	return resp
}

func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrBadRequest), errors.Is(err, ErrChecksum):
		return http.StatusBadRequest
	case errors.Is(err, ErrUnknownDriver):
		return http.StatusNotFound
	case errors.Is(err, ErrEnded):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

func fail(w http.ResponseWriter, code int, err error) {
	reply(w, code, ErrorResponse{Action: "ErrorResponse", Message: err.Error(), ServerFlintVersion: flint.Version})
}

func reply(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(encodeJSON(v))
}
