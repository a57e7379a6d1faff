package uri

import (
	"errors"
	"strings"
	"testing"
)

func TestSplitChecksum(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	for _, c := range []struct{ in, url, sum string }{
		{"https://h/f.txt#sha256=" + sum, "https://h/f.txt", sum},
		{"https://h/f.txt?sig=1#SHA256=" + strings.ToUpper(sum), "https://h/f.txt?sig=1", sum},
		{"https://h/f.txt", "https://h/f.txt", ""},
		{"https://h/f.txt#part", "https://h/f.txt#part", ""},
		{"http://h/f.txt#", "http://h/f.txt#", ""},
	} {
		u, s, err := SplitChecksum(c.in)
		if err != nil || u != c.url || s != c.sum {
			t.Errorf("SplitChecksum(%q) = %q, %q, %v; want %q, %q", c.in, u, s, err, c.url, c.sum)
		}
	}
	for _, in := range []string{
		"https://h/f.txt#sha256=",
		"https://h/f.txt#sha256=" + sum[:62],
		"https://h/f.txt#sha256=" + sum + "00",
		"https://h/f.txt#sha256=" + strings.Repeat("zz", 32),
	} {
		_, _, err := SplitChecksum(in)
		if !errors.Is(err, ErrInvalidURI) || !strings.Contains(err.Error(), "not a SHA-256") {
			t.Errorf("SplitChecksum(%q): %v, want ErrInvalidURI saying it is not a SHA-256", in, err)
		}
	}
	if _, _, err := SplitChecksum("https://h/f.txt?token=s3cr3tvalue#sha256=x"); err == nil || strings.Contains(err.Error(), "s3cr3tvalue") {
		t.Errorf("an invalid checksum's error shows the URL's token: %v", err)
	}
}
