package driverside

import (
	"path"
	"strings"
)

// URIBase is the file name a fetcher stores a URI under.
func URIBase(u string) string {
	u, _, _ = strings.Cut(u, "#")
	u, _, _ = strings.Cut(u, "?")
	return path.Base(u)
}

// IsArchive reports whether the Mesos fetcher extracts the file at u (by its name).
func IsArchive(u string) bool {
	b := strings.ToLower(URIBase(u))
	for _, ext := range []string{".tar", ".tgz", ".tar.gz", ".tbz2", ".tar.bz2", ".txz", ".tar.xz", ".zip"} {
		if strings.HasSuffix(b, ext) {
			return true
		}
	}
	return false
}

// WithToken puts the file server token into a URL's query, before its
// fragment: the agent's fetcher has no per-task header hook.
func WithToken(u, token string) string {
	base, frag, hasFrag := strings.Cut(u, "#")
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	base += sep + "token=" + token
	if hasFrag {
		base += "#" + frag
	}
	return base
}

// RedactURI removes the query (which may hold a token) and user info from
// a URI before it is logged.
func RedactURI(u string) string {
	frag := ""
	if i := strings.Index(u, "#"); i >= 0 {
		u, frag = u[:i], u[i:]
	}
	if i := strings.Index(u, "?"); i >= 0 {
		u = u[:i] + "?REDACTED"
	}
	if i := strings.Index(u, "://"); i >= 0 {
		rest := u[i+3:]
		if at := strings.Index(rest, "@"); at >= 0 && at < strings.IndexAny(rest+"/", "/") {
			u = u[:i+3] + "REDACTED@" + rest[at+1:]
		}
	}
	return u + frag
}
