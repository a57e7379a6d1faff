package dispatcher

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/uri/fileserver"
)

const testToken = "test-token-0123456789abcdef"

// newUnstarted is a Dispatcher with a real store, binaries, sealer and file
// server, not connected to Mesos: submissions queue, nothing launches.
func newUnstarted(t *testing.T) (*Dispatcher, *httptest.Server, string) {
	t.Helper()
	dir := t.TempDir()
	st, _ := NewDirStore(filepath.Join(dir, "store"))
	bins, _ := NewBinaries(filepath.Join(dir, "binaries"))
	key, _ := LoadOrCreateKey(filepath.Join(dir, "secrets.key"))
	sealer, _ := NewSealer(key)
	files, err := fileserver.New(fileserver.Config{Token: fileserver.NewToken()})
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := files.Serve(lis); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = files.Close(context.Background()) })
	d, err := New(Config{Mesos: mesosConfig("mesos://127.0.0.1:1"), Store: st, Binaries: bins, Sealer: sealer, Files: files})
	if err != nil {
		t.Fatal(err)
	}
	h, err := Handler(d, ServerConfig{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return d, srv, filepath.Join(dir, "store")
}

func call(t *testing.T, method, url, token string, body []byte, hdr ...string) (int, map[string]any, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return resp.StatusCode, m, string(raw)
}

func TestRESTSubmitStatusKill(t *testing.T) {
	_, srv, storeDir := newUnstarted(t)
	prog := []byte("program bytes")
	sum := sha256.Sum256(prog)
	hexSum := hex.EncodeToString(sum[:])

	// Unauthorised: no token, a wrong one.
	for _, tok := range []string{"", "wrong-token-0123456789"} {
		code, m, _ := call(t, "POST", srv.URL+"/v1/submissions/create", tok, []byte(`{}`))
		if code != http.StatusUnauthorized || m["action"] != "ErrorResponse" {
			t.Fatalf("token %q: %d %v", tok, code, m)
		}
	}
	// An upload whose content is not its declared hash.
	code, m, _ := call(t, "POST", srv.URL+"/v1/binaries?name=prog", testToken, prog, "X-Flint-Sha256", sha)
	if code != http.StatusBadRequest || !strings.Contains(m["message"].(string), "checksum mismatch") {
		t.Fatalf("checksum mismatch: %d %v", code, m)
	}
	code, m, _ = call(t, "POST", srv.URL+"/v1/binaries?name=prog", testToken, prog, "X-Flint-Sha256", hexSum)
	if code != http.StatusOK || m["appResource"] != "sha256:"+hexSum {
		t.Fatalf("upload: %d %v", code, m)
	}
	// A submission of a binary never uploaded, one with an unknown field.
	code, m, _ = call(t, "POST", srv.URL+"/v1/submissions/create", testToken, []byte(`{"action":"CreateSubmissionRequest","appResource":"sha256:`+sha+`"}`))
	if code != http.StatusBadRequest || !strings.Contains(m["message"].(string), "was uploaded") {
		t.Fatalf("not uploaded: %d %v", code, m)
	}
	code, m, _ = call(t, "POST", srv.URL+"/v1/submissions/create", testToken, []byte(`{"action":"CreateSubmissionRequest","appResource":"sha256:`+hexSum+`","supervise":true}`))
	if code != http.StatusBadRequest || !strings.Contains(m["message"].(string), `unknown field "supervise"`) {
		t.Fatalf("unknown field: %d %v", code, m)
	}
	body := `{"action":"CreateSubmissionRequest","appResource":"sha256:` + hexSum + `","appArgs":["x"],` +
		`"flintProperties":{"flint.authenticate.secret":"a-secret-of-24-characters"},"clientFlintVersion":"dev"}`
	code, m, _ = call(t, "POST", srv.URL+"/v1/submissions/create", testToken, []byte(body))
	if code != http.StatusOK || m["success"] != true || !idRE.MatchString(m["submissionId"].(string)) {
		t.Fatalf("create: %d %v", code, m)
	}
	id := m["submissionId"].(string)

	code, m, raw := call(t, "GET", srv.URL+"/v1/submissions/status/"+id, testToken, nil)
	if code != http.StatusOK || m["driverState"] != "QUEUED" || m["action"] != "SubmissionStatusResponse" {
		t.Fatalf("status: %d %v", code, m)
	}
	if strings.Contains(raw, "a-secret-of-24-characters") || !strings.Contains(raw, Redacted) {
		t.Fatalf("status shows the secret or no redaction:\n%s", raw)
	}
	_, _, page := call(t, "GET", srv.URL+"/?token="+testToken, "", nil)
	if !strings.Contains(page, id) || strings.Contains(page, "a-secret-of-24-characters") || !strings.Contains(page, "Queued drivers") {
		t.Fatalf("page:\n%s", page)
	}
	stored, _ := os.ReadFile(filepath.Join(storeDir, "drivers", id+".json"))
	if bytes.Contains(stored, []byte("a-secret-of-24-characters")) {
		t.Fatalf("stored record holds the secret:\n%s", stored)
	}

	code, m, _ = call(t, "POST", srv.URL+"/v1/submissions/kill/"+id, testToken, nil)
	if code != http.StatusOK || m["success"] != true {
		t.Fatalf("kill: %d %v", code, m)
	}
	_, m, _ = call(t, "GET", srv.URL+"/v1/submissions/status/"+id, testToken, nil)
	if m["driverState"] != "KILLED" {
		t.Fatalf("after kill: %v", m)
	}
	code, _, _ = call(t, "POST", srv.URL+"/v1/submissions/kill/"+id, testToken, nil)
	if code != http.StatusConflict {
		t.Fatalf("second kill: %d", code)
	}
	code, m, _ = call(t, "GET", srv.URL+"/v1/submissions/status/driver-20260101000000-ffff", testToken, nil)
	if code != http.StatusNotFound || m["driverState"] != "NOT_FOUND" {
		t.Fatalf("unknown id: %d %v", code, m)
	}
}

func TestRESTNeedsATokenUnlessAnonymous(t *testing.T) {
	if _, err := Handler(nil, ServerConfig{}); err == nil {
		t.Fatal("a server without a token and not anonymous")
	}
	if _, err := Handler(nil, ServerConfig{Anonymous: true}); err != nil {
		t.Fatal(err)
	}
}

func mesosConfig(master string) mesosconn.Config { return mesosconn.Config{Master: master} }
