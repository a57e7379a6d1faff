package driverside

import "testing"

func TestRedactURI(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:1/files/x/flint?token=abc#sha256=00": "http://h:1/files/x/flint?REDACTED#sha256=00",
		"https://u:p@h/f": "https://REDACTED@h/f",
		"/opt/flint":      "/opt/flint",
	} {
		if got := RedactURI(in); got != want {
			t.Errorf("RedactURI(%q) = %q, want %q", in, got, want)
		}
	}
	if got := WithToken("http://h/f#sha256=00", "T"); got != "http://h/f?token=T#sha256=00" {
		t.Errorf("WithToken = %q", got)
	}
}
