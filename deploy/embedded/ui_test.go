package embedded_test

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/examples/pi"
	"github.com/flint-mesos/flint/framework/uistore"
	"github.com/flint-mesos/flint/framework/webui"
	"github.com/flint-mesos/flint/internal/redact"
)

const uiSecret = "embedded-ui-test-secret-0123456789"

func authGet(t *testing.T, url string, token string, v any) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, b)
	}
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v", url, err)
		}
	}
	return string(b)
}

// On a Mesos master the UI is the framework's webui_url, and its executor
// pages show the executors' sandbox logs, read through the agents' /files.
func TestUIOnTheEmbeddedMaster(t *testing.T) {
	for _, mode := range []string{"coarse", "fine"} {
		t.Run(mode, func(t *testing.T) { testUIOnTheEmbeddedMaster(t, mode == "coarse") })
	}
}

func testUIOnTheEmbeddedMaster(t *testing.T, coarse bool) {
	workDir := t.TempDir()
	fc, logs, err := newContext(t, "flint.ui.port=0", "flint.embedded.workDir="+workDir, "flint.authenticate.secret="+uiSecret,
		"flint.mesos.coarse="+strconv.FormatBool(coarse))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Stop(context.Background())
	if _, err := pi.Estimate(context.Background(), fc, 4, 1000); err != nil {
		t.Fatal(err)
	}
	token := webui.TokenFor(uiSecret)
	m := regexp.MustCompile(`embedded Mesos master at (http://\S+) `).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no master URL in the log:\n%s", logs)
	}
	var st struct {
		Frameworks []struct {
			ID       string `json:"id"`
			WebUIURL string `json:"webui_url"`
		} `json:"frameworks"`
	}
	authGet(t, m[1]+"/state", "", &st)
	if len(st.Frameworks) != 1 || st.Frameworks[0].WebUIURL != fc.UIURL() || fc.UIURL() == "" {
		t.Fatalf("master's frameworks %+v, want webui_url %q", st.Frameworks, fc.UIURL())
	}
	var execs []uistore.ExecutorSummary
	authGet(t, fc.UIURL()+"/api/v1/applications/"+fc.AppID()+"/executors", token, &execs)
	if len(execs) == 0 {
		t.Fatal("no executors")
	}
	for _, file := range []string{"stdout", "stderr"} {
		x := execs[0]
		link := x.ExecutorLogs[file]
		if link == "" {
			t.Fatalf("executor %s has no %s link: %+v", x.ID, file, x.ExecutorLogs)
		}
		page := authGet(t, link, token, nil)
		paths, _ := filepath.Glob(filepath.Join(workDir, "*", "slaves", "*", "frameworks", st.Frameworks[0].ID, "executors", x.ID, "runs", "latest", file))
		if len(paths) == 0 {
			paths, _ = filepath.Glob(filepath.Join(workDir, "slaves", "*", "frameworks", st.Frameworks[0].ID, "executors", x.ID, "runs", "latest", file))
		}
		if len(paths) != 1 {
			t.Fatalf("executor %s's %s on disk: %v", x.ID, file, paths)
		}
		onDisk, err := os.ReadFile(paths[0])
		if err != nil {
			t.Fatal(err)
		}
		i := strings.Index(page, `<pre class="log" id="log">`)
		j := strings.LastIndex(page, "</pre>")
		if i < 0 || j < i {
			t.Fatalf("%s page:\n%s", file, page)
		}
		shown := page[i+len(`<pre class="log" id="log">`) : j]
		// The page shows the file with its URLs redacted: Mesos' fetcher
		// wrote the executor binary's URL there with its fetch token.
		if shown != html.EscapeString(redact.Text(string(onDisk))) {
			t.Fatalf("%s page shows %d bytes, the sandbox file has %d:\n%q\nvs\n%q", file, len(shown), len(onDisk), shown, onDisk)
		}
		t.Logf("executor %s %s: %d bytes", x.ID, file, len(onDisk))
	}
}
