package webui

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"time"

	"github.com/flint-mesos/flint/framework/uistore"
	"github.com/flint-mesos/flint/internal/redact"
)

// logTail is how much of a sandbox log a page shows: its end.
const logTail = 64 << 10

type logData struct {
	ID, File, Where, Text string
	Size, Shown           int64
	Truncated             bool
}

// filesRead is the answer of a Mesos agent's /files/read.
type filesRead struct {
	Data   string `json:"data"`
	Offset int64  `json:"offset"`
}

func (s *server) logsPage(w http.ResponseWriter, r *http.Request, st *uistore.Store, p *page) {
	q := r.URL.Query()
	id, file := q.Get("id"), q.Get("file")
	if file != "stdout" && file != "stderr" {
		http.Error(w, "webui: file must be stdout or stderr", http.StatusBadRequest)
		return
	}
	if _, err := st.Executor(id); err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if s.o.Sandbox == nil {
		http.Error(w, "webui: executors here have no Mesos sandbox (local mode, or a history server)", http.StatusNotFound)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	sb, err := s.o.Sandbox(ctx, id)
	if err != nil {
		http.Error(w, fmt.Sprintf("webui: locate executor %s's sandbox: %v", id, err), http.StatusBadGateway)
		return
	}
	d, err := s.tail(ctx, sb, file)
	if err != nil {
		http.Error(w, fmt.Sprintf("webui: read executor %s's %s: %v", id, file, err), http.StatusBadGateway)
		return
	}
	d.ID, d.File = id, file
	p.Data = d
	s.render(w, "logs", p)
}

// tail reads the end of a sandbox file through the agent's /files/read:
// first its size (offset -1), then the last logTail bytes.
func (s *server) tail(ctx context.Context, sb Sandbox, file string) (logData, error) {
	p := path.Join(sb.Dir, file)
	var size filesRead
	if err := s.filesRead(ctx, sb.AgentURL, p, -1, 0, &size); err != nil {
		return logData{}, err
	}
	from := max(0, size.Offset-logTail)
	var page filesRead
	if err := s.filesRead(ctx, sb.AgentURL, p, from, logTail, &page); err != nil {
		return logData{}, err
	}
	text := redact.Text(page.Data)
	if from > 0 {
		text = redact.Tail(page.Data) // its first word may end a cut URL
	}
	return logData{Where: sb.AgentURL + "/files/read?path=" + url.QueryEscape(p), Text: text, Size: size.Offset,
		Shown: int64(len(page.Data)), Truncated: from > 0}, nil
}

func (s *server) filesRead(ctx context.Context, agent, p string, offset, length int64, out *filesRead) error {
	q := url.Values{"path": {p}, "offset": {fmt.Sprint(offset)}}
	if length > 0 {
		q.Set("length", fmt.Sprint(length))
	}
	u := agent + "/files/read?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := s.o.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4*logTail)).Decode(out); err != nil {
		return fmt.Errorf("GET %s: %w", u, err)
	}
	return nil
}
