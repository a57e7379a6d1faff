// Package uuid makes random (RFC 9562 version 4) UUIDs: the ids of status
// updates, streams and frameworks in minimesos and Flint's executors. It
// is the one helper for them; the executor runtime's update ids, made at a
// much higher rate, are version 8 UUIDs of their own (executor.updateIDs).
package uuid

import (
	"crypto/rand"
	"fmt"
)

// New returns a random version 4 UUID, 16 bytes.
func New() []byte {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails since Go 1.24
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return b
}

// String is b in the canonical 8-4-4-4-12 hex form; b must be 16 bytes.
func String(b []byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// NewString returns a random version 4 UUID in its canonical form.
func NewString() string { return String(New()) }
