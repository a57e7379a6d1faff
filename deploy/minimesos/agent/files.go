package agent

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxReadLength caps one /files/read answer (Mesos pages large files).
const maxReadLength = 1 << 20

// sandboxPath resolves p (an absolute path, as Mesos' sandbox paths are)
// and reports whether it lies inside the agent's sandboxes
// (<work_dir>/slaves), symlinks resolved.
func (a *Agent) sandboxPath(p string) (string, bool) {
	if p == "" || !filepath.IsAbs(p) {
		return "", false
	}
	root, err := filepath.EvalSymlinks(filepath.Join(a.cfg.WorkDir, "slaves"))
	if err != nil {
		return "", false
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err != nil {
		return "", false
	}
	if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
		return "", false
	}
	return real, true
}

func writeJSONAnswer(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// serveFilesRead answers GET /files/read?path=&offset=&length= like Mesos:
// {"data": "...", "offset": N}; offset -1 (or absent data) reports the
// file's size in offset with empty data.
func (a *Agent) serveFilesRead(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	path, ok := a.sandboxPath(q.Get("path"))
	if !ok {
		http.Error(w, "File not found", http.StatusNotFound)
		return
	}
	offset, length := int64(-1), int64(maxReadLength)
	var err error
	if s := q.Get("offset"); s != "" {
		if offset, err = strconv.ParseInt(s, 10, 64); err != nil || offset < -1 {
			http.Error(w, "Failed to parse offset", http.StatusBadRequest)
			return
		}
	}
	if s := q.Get("length"); s != "" {
		if length, err = strconv.ParseInt(s, 10, 64); err != nil || length < -1 {
			http.Error(w, "Failed to parse length", http.StatusBadRequest)
			return
		}
		if length == -1 || length > maxReadLength {
			length = maxReadLength
		}
	}
	f, err := os.Open(path)
	if err != nil {
		http.Error(w, "File not found", http.StatusNotFound)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.IsDir() {
		http.Error(w, "Cannot read a directory", http.StatusBadRequest)
		return
	}
	if offset == -1 || offset > fi.Size() {
		writeJSONAnswer(w, map[string]any{"data": "", "offset": fi.Size()})
		return
	}
	buf := make([]byte, min(length, fi.Size()-offset))
	n, err := f.ReadAt(buf, offset)
	if err != nil && err != io.EOF {
		http.Error(w, "Failed to read file: "+err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSONAnswer(w, map[string]any{"data": string(buf[:n]), "offset": offset})
}

// serveFilesBrowse answers GET /files/browse?path= with the directory
// listing in Mesos' format.
func (a *Agent) serveFilesBrowse(w http.ResponseWriter, r *http.Request) {
	path, ok := a.sandboxPath(r.URL.Query().Get("path"))
	if !ok {
		http.Error(w, "File not found", http.StatusNotFound)
		return
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		http.Error(w, "Cannot browse: "+err.Error(), http.StatusBadRequest)
		return
	}
	out := make([]map[string]any, 0, len(entries))
	for _, e := range entries {
		fi, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, map[string]any{
			"path": filepath.Join(path, e.Name()), "size": fi.Size(), "mode": fi.Mode().String(),
			"mtime": fi.ModTime().Unix(), "nlink": 1,
		})
	}
	writeJSONAnswer(w, out)
}
