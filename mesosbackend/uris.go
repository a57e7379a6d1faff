package mesosbackend

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/uri"
)

// URIBase is the file name Flint gives a fetched URI (CommandInfo.URI's
// output_file): the last segment of its path, unescaped, without query or
// fragment; "" when the URI has no file name (no path, or one ending in
// "/"). Mesos' fetcher, left to itself, would keep the query and fragment.
func URIBase(u string) string {
	u = strings.TrimSpace(u)
	if strings.Contains(u, "://") {
		p, err := url.Parse(u)
		if err != nil {
			return ""
		}
		u = p.Path
	} else {
		u, _, _ = strings.Cut(u, "#")
		u, _, _ = strings.Cut(u, "?")
	}
	if u == "" || strings.HasSuffix(u, "/") {
		return ""
	}
	b := path.Base(u)
	if b == "." || b == ".." || b == "/" {
		return ""
	}
	return b
}

// ExplainStatus adds why to a Mesos task status message that reports an
// exit status Flint's executors use deliberately ("Command exited with
// status 65"), and returns msg unchanged otherwise.
func ExplainStatus(msg string) string {
	if strings.Contains(msg, fmt.Sprintf("exited with status %d", contract.ExitBinaryMismatch)) {
		return msg + ": " + ExitExplained(contract.ExitBinaryMismatch<<8)
	}
	return msg
}

// IsArchive reports whether the Mesos fetcher extracts the file at u: by
// its name, with the fetcher's own rule (uri.IsArchive).
func IsArchive(u string) bool { return uri.IsArchive(URIBase(u)) }

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
