package sandbox

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fileAgent serves one file through /files/read with Mesos' semantics
// (offset -1: the size).
func fileAgent(content string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/files/read" || r.URL.Query().Get("path") != "/d/stderr" {
			http.NotFound(w, r)
			return
		}
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		n, _ := strconv.Atoi(r.URL.Query().Get("length"))
		if off == -1 {
			json.NewEncoder(w).Encode(map[string]any{"data": "", "offset": len(content)})
			return
		}
		end := min(len(content), off+n)
		json.NewEncoder(w).Encode(map[string]any{"data": content[off:end], "offset": off})
	}))
}

func TestTailReadsTheLastLines(t *testing.T) {
	var b strings.Builder
	for i := range 5000 { // > 64 KiB: Tail reads only the end
		b.WriteString("line " + strconv.Itoa(i) + " ........\n")
	}
	b.WriteString("FATAL: the disk is on fire\n")
	srv := fileAgent(b.String())
	defer srv.Close()
	s := Sandbox{AgentURL: srv.URL, Dir: "/d"}
	got, err := s.Tail(t.Context(), srv.Client(), "stderr", 3)
	if want := []string{"line 4998 ........", "line 4999 ........", "FATAL: the disk is on fire"}; err != nil || !slices.Equal(got, want) {
		t.Fatalf("Tail = %q, %v; want %q", got, err, want)
	}
	if _, err := s.Tail(t.Context(), srv.Client(), "stdout", 3); err == nil {
		t.Fatal("Tail of a missing file succeeded")
	}
}

func TestLastLines(t *testing.T) {
	cases := []struct {
		data string
		n    int
		cut  bool
		want []string
	}{
		{"", 3, false, nil},
		{"a\nb\n", 3, false, []string{"a", "b"}},
		{"a\nb\nc\n", 2, false, []string{"b", "c"}},
		{"tial\nb\n", 5, true, []string{"b"}}, // the partial first line is dropped
		{"no newline", 1, false, []string{"no newline"}},
	}
	for _, c := range cases {
		if got := lastLines(c.data, c.n, c.cut); !slices.Equal(got, c.want) {
			t.Errorf("lastLines(%q, %d, %v) = %q, want %q", c.data, c.n, c.cut, got, c.want)
		}
	}
}
