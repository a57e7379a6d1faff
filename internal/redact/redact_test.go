package redact

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"testing"
)

const hex64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestURL feeds what each of the four redactors Flint had before this
// package was given, and the URLs it sees elsewhere; expected values are
// written out by hand.
func TestURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		// the uri fetcher's (query token values, http user info passwords)
		{"http://127.0.0.1:1/files/x?token=T0K", "http://127.0.0.1:1/files/x?token=*****"},
		{"http://bob:hunter2@h:1/missing", "http://*****@h:1/missing"},
		{"http://h/x?a=1&token=T0K#sha256=" + hex64, "http://h/x?a=*****&token=*****#sha256=" + hex64},
		{"http://h/x?%zz=T0K", "http://h/x?%zz=*****"}, // a query net/url cannot parse
		// the Mesos backends' (the executor URI with the file server token)
		{"http://h:1/files/x/flint?token=abc#frag", "http://h:1/files/x/flint?token=*****#*****"},
		{"https://u:p@h/f", "https://*****@h/f"},
		{"https://u:p@h/flint?sig=x", "https://*****@h/flint?sig=*****"},
		{"/opt/flint", "/opt/flint"},
		// the added files' (a presigned URL's credential)
		{"https://b.s3.amazonaws.com/k?X-Amz-Credential=AK%2F1&X-Amz-Signature=ab", "https://b.s3.amazonaws.com/k?X-Amz-Credential=*****&X-Amz-Signature=*****"},
		{"https://TOKEN@github.com/o/r", "https://*****@github.com/o/r"},
		// the executor's added-file log: a bare query word, an empty value
		{"http://h/f?SECRETWORD", "http://h/f?*****"},
		{"http://h/f?a=&b", "http://h/f?a=&*****"},
		// a password holding '#' or '?' is masked whole
		{"https://u:p#ss@h/f", "https://*****@h/f"},
		{"https://u:p?ss@h/f?x=1", "https://*****@h/f?x=*****"},
		// nothing to hide
		{"http://h:1/files/x/flint", "http://h:1/files/x/flint"},
		{"127.0.0.1:5050", "127.0.0.1:5050"},
		{"", ""},
		// a checksum fragment that is not 64 hex digits is masked
		{"http://h/f#sha256=abc", "http://h/f#sha256=*****"},
	} {
		if got := URL(c.in); got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestQuery(t *testing.T) {
	for in, want := range map[string]string{
		"token=abc":            "token=*****",
		"access_token=a&x=1":   "access_token=*****&x=*****",
		"":                     "",
		"a=b=c":                "a=*****",
		"%zz":                  "*****",
		"token=abc&token=def&": "token=*****&token=*****&",
	} {
		if got := Query(in); got != want {
			t.Errorf("Query(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestText feeds lines as they reach users: the fetcher's line in a
// sandbox's stderr (the sandbox report's format), a log line with a
// quoted URL, an HTTP client's error, a server's request path.
func TestText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"I1201 13:35:52.810487 fetcher: Fetching URI 'http://127.0.0.1:36269/files/dc83/myjob?token=s3cr3t'",
			"I1201 13:35:52.810487 fetcher: Fetching URI 'http://127.0.0.1:36269/files/dc83/myjob?token=*****'"},
		{"Fetching URI 'http://h:1/files/x/flint?token=s3cr3t&x=1' and http://h/y?access_token=abc",
			"Fetching URI 'http://h:1/files/x/flint?token=*****&x=*****' and http://h/y?access_token=*****"},
		{`level=info msg="serving shuffle outputs" address="https://127.0.0.1:45497/?dir=abc"`,
			`level=info msg="serving shuffle outputs" address="https://127.0.0.1:45497/?dir=*****"`},
		{`Get "http://127.0.0.1:1/files/x?token=q": dial tcp 127.0.0.1:1: connect: connection refused`,
			`Get "http://127.0.0.1:1/files/x?token=*****": dial tcp 127.0.0.1:1: connect: connection refused`},
		{"GET /files/x/flint?token=abc 401", "GET /files/x/flint?token=***** 401"},
		{"two\nhttps://u:p@h/a\nlines", "two\nhttps://*****@h/a\nlines"},
		{"no url at all: a/b c", "no url at all: a/b c"},
		{"mail me@example.com", "mail me@example.com"},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q)\n = %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestError(t *testing.T) {
	if Error(nil) != nil {
		t.Fatal("Error(nil) is not nil")
	}
	base := &fs.PathError{Op: "open", Path: "http://h/f?token=abc", Err: fs.ErrNotExist}
	err := Error(base)
	if got, want := err.Error(), "open http://h/f?token=*****: file does not exist"; got != want {
		t.Errorf("Error = %q, want %q", got, want)
	}
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe != base {
		t.Errorf("the chain is lost: %v", err)
	}
}

// TestWriterHoldsPartialLines writes a URL split in the middle of its
// token: neither half may pass unmasked.
func TestWriterHoldsPartialLines(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	for _, p := range []string{"a http://h/f?tok", "en=s3cr", "3t b\nnext ", "http://h/g?x=1"} {
		if n, err := w.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", p, n, err)
		}
		if strings.Contains(out.String(), "s3cr") {
			t.Fatalf("a part of the token was written: %q", out.String())
		}
	}
	if got, want := out.String(), "a http://h/f?token=***** b\n"; got != want {
		t.Fatalf("before Flush: %q, want %q", got, want)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "a http://h/f?token=***** b\nnext http://h/g?x=*****"; got != want {
		t.Fatalf("after Flush: %q, want %q", got, want)
	}
}

func FuzzText(f *testing.F) {
	f.Add("Fetching URI 'http://h/f?token=abc'")
	f.Add("https://u:p@h/x#y")
	f.Fuzz(func(t *testing.T, s string) {
		// Idempotent, and no value after "token=" survives.
		once := Text(s)
		if Text(once) != once {
			t.Fatalf("Text is not idempotent on %q: %q then %q", s, once, Text(once))
		}
		u := URL(s)
		if _, after, ok := strings.Cut(u, "?token="); ok && !strings.HasPrefix(after, Mask) && after != "" && after[0] != '&' && after[0] != '#' {
			t.Fatalf("URL(%q) = %q shows a token", s, u)
		}
	})
}

func TestTail(t *testing.T) {
	for in, want := range map[string]string{
		"en=s3cr3t'\nI fetcher: Fetching URI 'http://h/f?token=abc'\n": "*****'\nI fetcher: Fetching URI 'http://h/f?token=*****'\n",
		"cr3t":        "*****",
		"\nnext line": "\nnext line",
		"":            "",
	} {
		if got := Tail(in); got != want {
			t.Errorf("Tail(%q) = %q, want %q", in, got, want)
		}
	}
}
