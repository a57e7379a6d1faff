package contract

import (
	"strconv"
	"strings"
)

const releasePrefix = "flint.shuffle.release:"

// ReleaseMessage is the framework message that tells a fine-grained
// executor the driver no longer tracks shuffleID: it deletes the files
// and, holding no other outputs, may exit on idle.
func ReleaseMessage(shuffleID int) []byte { return []byte(releasePrefix + strconv.Itoa(shuffleID)) }

// ParseReleaseMessage reads a ReleaseMessage.
func ParseReleaseMessage(b []byte) (shuffleID int, ok bool) {
	rest, ok := strings.CutPrefix(string(b), releasePrefix)
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(rest)
	return id, err == nil && id >= 0 && strconv.Itoa(id) == rest
}

const releaseNSPrefix = "flint.shuffle.release-ns:"

// ShuffleReleaseMessage is the framework message that tells a
// fine-grained executor what ReleaseShuffle(ns, shuffleID, all) does on a
// coarse one: ReleaseMessage for the executor's own ids (ns ""), else
// "flint.shuffle.release-ns:<ns>" for a whole namespace or
// "flint.shuffle.release-ns:<ns>/<id>" for one of its shuffles.
func ShuffleReleaseMessage(ns string, shuffleID int, all bool) []byte {
	switch {
	case ns == "":
		return ReleaseMessage(shuffleID)
	case all:
		return []byte(releaseNSPrefix + ns)
	}
	return []byte(releaseNSPrefix + ns + "/" + strconv.Itoa(shuffleID))
}

// ParseShuffleReleaseMessage reads a ShuffleReleaseMessage.
func ParseShuffleReleaseMessage(b []byte) (ns string, shuffleID int, all, ok bool) {
	if id, ok := ParseReleaseMessage(b); ok {
		return "", id, false, true
	}
	rest, ok := strings.CutPrefix(string(b), releaseNSPrefix)
	if !ok {
		return "", 0, false, false
	}
	ns, idText, one := strings.Cut(rest, "/")
	if !validNamespace(ns) {
		return "", 0, false, false
	}
	if !one {
		return ns, 0, true, true
	}
	id, err := strconv.Atoi(idText)
	if err != nil || id < 0 || strconv.Itoa(id) != idText {
		return "", 0, false, false
	}
	return ns, id, false, true
}

// validNamespace is the shuffle server's rule: 1–128 of [A-Za-z0-9._-].
func validNamespace(ns string) bool {
	if ns == "" || len(ns) > 128 {
		return false
	}
	for _, r := range ns {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
		if !ok {
			return false
		}
	}
	return true
}
