package uuid

import (
	"regexp"
	"testing"
)

func TestNewIsVersion4(t *testing.T) {
	seen := map[string]bool{}
	canonical := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for range 1000 {
		b := New()
		if len(b) != 16 || b[6]>>4 != 4 || b[8]>>6 != 2 {
			t.Fatalf("%x is not a version 4 variant 1 UUID", b)
		}
		s := String(b)
		if !canonical.MatchString(s) {
			t.Fatalf("%q is not canonical", s)
		}
		if seen[s] {
			t.Fatalf("%s made twice", s)
		}
		seen[s] = true
	}
	if s := String([]byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0x4d, 0xef, 0x81, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}); s != "12345678-9abc-4def-8123-456789abcdef" {
		t.Fatalf("String = %q", s)
	}
	if !canonical.MatchString(NewString()) {
		t.Fatal("NewString is not canonical")
	}
}
