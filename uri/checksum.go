package uri

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/flint-mesos/flint/internal/redact"
)

// ChecksumFragment starts the fragment that gives a remote URL's SHA-256:
// https://host/path/file#sha256=<64 hex digits>.
const ChecksumFragment = "sha256="

// SplitChecksum separates a "#sha256=<64 hex digits>" fragment from a URL:
// it returns the URL without that fragment and the digest in lower case. A
// URL with no fragment, or another one, is returned as it is with "". A
// fragment that starts with sha256= (any case) but is not 64 hex digits
// fails with ErrInvalidURI. Fragments are never sent to a server, so the
// URL fetched is the same with or without one; the digest is for the
// fetcher's caller to verify (Fetch verifies no checksum, as Mesos').
func SplitChecksum(raw string) (string, string, error) {
	base, frag, ok := strings.Cut(raw, "#")
	if !ok || len(frag) < len(ChecksumFragment) || !strings.EqualFold(frag[:len(ChecksumFragment)], ChecksumFragment) {
		return raw, "", nil
	}
	sum := strings.ToLower(frag[len(ChecksumFragment):])
	if b, err := hex.DecodeString(sum); err != nil || len(b) != 32 {
		return "", "", fmt.Errorf("uri: %w: %s: the fragment #%s%s is not a SHA-256 (64 hex digits)", ErrInvalidURI, redact.URL(base), ChecksumFragment, frag[len(ChecksumFragment):])
	}
	return base, sum, nil
}
