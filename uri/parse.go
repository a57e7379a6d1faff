package uri

import (
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"strings"

	"github.com/flint-mesos/flint/internal/redact"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

type sourceKind int

const (
	kindLocal sourceKind = iota + 1
	kindHTTP
)

// source is a parsed CommandInfo.URI value.
type source struct {
	raw  string // the value with leading whitespace trimmed (the cache key)
	kind sourceKind
	path string   // kindLocal: absolute local path
	url  *url.URL // kindHTTP: the URL to request, fragment removed
	base string   // default output name (mesosBasename); "" when the URI has none
}

// redacted is the URI as shown in errors (redact.URL).
func (s source) redacted() string { return redact.URL(s.raw) }

// secrets are the values of the URI's query, which errors from the HTTP
// client (which quote the URL, maybe escaped) must not show.
func (s source) secrets() []string {
	if s.url == nil {
		return nil
	}
	var out []string
	for _, vs := range s.url.Query() {
		for _, v := range vs {
			if v != "" {
				out = append(out, v, url.QueryEscape(v))
			}
		}
	}
	return out
}

// parseURI applies Mesos' rules to a CommandInfo.URI value: leading
// whitespace is ignored; backslash, single quote and NUL are refused; no
// scheme or file:// means an absolute local path (file://localhost/ is
// accepted); http and https are downloaded; every other scheme is refused.
func parseURI(value string) (source, error) {
	v := strings.TrimLeft(value, " \t\r\n\v\f")
	if v == "" {
		return source{}, fmt.Errorf("%w: empty", ErrInvalidURI)
	}
	if i := strings.IndexAny(v, "\\'\x00"); i >= 0 {
		return source{}, fmt.Errorf("%w: contains forbidden character %q", ErrInvalidURI, v[i])
	}
	i := strings.Index(v, "://")
	if i < 0 {
		return parseLocal(v, v, false)
	}

	scheme := v[:i]
	if !validScheme(scheme) {
		return source{}, fmt.Errorf("%w: malformed scheme %q", ErrInvalidURI, scheme)
	}
	switch strings.ToLower(scheme) {
	case "file":
		rest := v[i+3:]
		if strings.HasPrefix(rest, "localhost/") {
			rest = rest[len("localhost"):]
		}
		return parseLocal(v, rest, true)
	case "http", "https":
		return parseHTTP(v)
	default:
		return source{}, fmt.Errorf("%w %q (only file, http and https are fetched)",
			ErrUnsupportedScheme, strings.ToLower(scheme))
	}
}

func validScheme(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (i == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

func parseLocal(raw, p string, fileURI bool) (source, error) {
	if !strings.HasPrefix(p, "/") {
		if fileURI {
			return source{}, fmt.Errorf("%w: file URI needs an absolute path", ErrInvalidURI)
		}
		return source{}, fmt.Errorf("%w: relative path %q (there is no frameworks home; use an absolute path)",
			ErrInvalidURI, p)
	}
	base, err := mesosBasename(raw)
	if err != nil {
		return source{}, err
	}
	return source{raw: raw, kind: kindLocal, path: filepath.Clean(p), base: base}, nil
}

func parseHTTP(raw string) (source, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return source{}, fmt.Errorf("%w: %v", ErrInvalidURI, err)
	}
	if u.Host == "" {
		return source{}, fmt.Errorf("%w: missing host", ErrInvalidURI)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	base, err := mesosBasename(raw)
	if err != nil {
		return source{}, err
	}
	// The fragment is never sent (curl, which Mesos' fetcher uses, drops
	// it too); it stays in the file name.
	u.Fragment, u.RawFragment = "", ""
	return source{raw: raw, kind: kindHTTP, url: u, base: base}, nil
}

// mesosBasename is the file name Mesos' fetcher gives a URI without
// output_file (Fetcher::basename in src/slave/containerizer/fetcher.cpp):
// the URI is treated as a file path, so the name is everything after the
// last "/" — query and fragment included, nothing unescaped. With a scheme
// the part after "://" must hold a "/" followed by something ("Malformed
// URI (missing path)" otherwise). Mesos would write a name that is empty,
// "." or ".." at or above the sandbox itself; those are refused here and
// need output_file.
func mesosBasename(v string) (string, error) {
	var base string
	if i := strings.Index(v, "://"); i > 1 {
		rest := v[i+3:]
		slash := strings.Index(rest, "/")
		if slash < 0 || len(rest) <= slash+1 {
			return "", fmt.Errorf("%w: malformed URI (missing path)", ErrInvalidURI)
		}
		base = rest[strings.LastIndex(rest, "/")+1:]
	} else {
		base = path.Base(v) // stout's Path::basename: trailing "/" ignored
	}
	if base == "/" || base == "." || base == ".." {
		base = ""
	}
	return base, nil
}

// outputName returns the sandbox-relative name the URI is stored under:
// output_file when set (cleaned; it may name subdirectories but must stay in
// the sandbox), else the URI's basename.
func outputName(u *mesos.CommandInfo_URI, s source) (string, error) {
	if u.OutputFile == nil {
		if s.base == "" {
			return "", fmt.Errorf("%w: no file name in URI; set output_file", ErrInvalidURI)
		}
		return s.base, nil
	}
	of := *u.OutputFile
	switch {
	case of == "":
		return "", fmt.Errorf("%w: empty output_file", ErrInvalidURI)
	case strings.ContainsAny(of, "\\\x00"):
		return "", fmt.Errorf("%w: forbidden character in output_file %q", ErrInvalidURI, of)
	case filepath.IsAbs(of):
		return "", fmt.Errorf("%w: output_file %q is absolute; it must be sandbox-relative", ErrInvalidURI, of)
	case !filepath.IsLocal(of):
		return "", fmt.Errorf("%w: output_file %q leaves the sandbox", ErrInvalidURI, of)
	}
	clean := filepath.Clean(of)
	if clean == "." || strings.HasSuffix(of, "/") {
		return "", fmt.Errorf("%w: output_file %q names a directory", ErrInvalidURI, of)
	}
	return clean, nil
}
