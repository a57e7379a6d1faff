package redact

import (
	"regexp"
	"strings"
)

// Mask replaces every hidden value.
const Mask = "*****"

// checksumKey is Flint's checksum fragment ("#sha256=<64 hex>", the uri
// package's ChecksumFragment), shown as it is.
const checksumKey = "sha256="

// URL returns raw with its user information and the values of its query
// and fragment parameters replaced by Mask. A string with none of these is
// returned unchanged (a local path, a host:port).
func URL(raw string) string {
	s := userInfo(raw)
	frag, hasFrag := "", false
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s, frag, hasFrag = s[:i], s[i+1:], true
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s = s[:i+1] + Query(s[i+1:])
	}
	if hasFrag {
		s += "#" + fragment(frag)
	}
	return s
}

// userInfo masks what precedes the last "@" before the first "/" after
// "://". It looks at "/" only, so a password holding "?" or "#" is masked
// whole (at the price of the host of a URL with no path and an "@" in its
// query).
func userInfo(s string) string {
	i := strings.Index(s, "://")
	if i < 0 {
		return s
	}
	rest := s[i+3:]
	end := strings.IndexByte(rest, '/')
	if end < 0 {
		end = len(rest)
	}
	at := strings.LastIndexByte(rest[:end], '@')
	if at < 0 {
		return s
	}
	return s[:i+3] + Mask + rest[at:]
}

// Query returns a raw query (without "?") with every value replaced by Mask
// and every bare word (a parameter without "=") replaced by Mask; names
// and empty values stay.
func Query(raw string) string {
	if raw == "" {
		return raw
	}
	parts := strings.Split(raw, "&")
	for i, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		switch {
		case ok && v != "":
			parts[i] = k + "=" + Mask
		case !ok && p != "":
			parts[i] = Mask
		}
	}
	return strings.Join(parts, "&")
}

func fragment(f string) string {
	if h, ok := strings.CutPrefix(f, checksumKey); ok && isHex64(h) {
		return f
	}
	return Query(f)
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// urlInText finds what Text passes to URL: an absolute URL, or a path
// with a query or fragment, up to white space, a quote or an angle bracket.
var urlInText = regexp.MustCompile("[A-Za-z][A-Za-z0-9+.-]*://[^\\s'\"<>`]+|/[^\\s'\"<>`?#]*[?#][^\\s'\"<>`]*")

// trailing is punctuation that ends a sentence rather than a URL
// ("open http://h/f?x=1: no such file").
const trailing = ".,:;!)]}"

// Text returns s with URL applied to every URL in it.
func Text(s string) string {
	if !strings.ContainsAny(s, "?#@") {
		return s
	}
	return urlInText.ReplaceAllStringFunc(s, func(m string) string {
		u := strings.TrimRight(m, trailing)
		return URL(u) + m[len(u):]
	})
}

// Tail is Text for the end of a longer text cut at any byte (the last
// kilobytes of a log): its first word, which may be the end of a URL whose
// start was cut off, becomes Mask.
func Tail(s string) string {
	end := strings.IndexAny(s, " \t\r\n'\"<>`")
	if end < 0 {
		end = len(s)
	}
	if end == 0 {
		return Text(s)
	}
	return Mask + Text(s[end:])
}
