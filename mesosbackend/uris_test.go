package mesosbackend

import (
	"strings"
	"testing"
)

func TestWithToken(t *testing.T) {
	if got := WithToken("http://h/f#frag", "T"); got != "http://h/f?token=T#frag" {
		t.Errorf("WithToken = %q", got)
	}
}

// URIBase is the output_file Flint sets: no query, no fragment, unescaped.
func TestURIBase(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:1/files/x/flint?token=abc#frag": "flint",
		"https://h/b/app%20data.tar.gz?sig=1":     "app data.tar.gz",
		"/opt/flint/bin/job":                      "job",
		"file:///opt/x.zip":                       "x.zip",
		"http://h":                                "",
		"http://h/dir/":                           "",
		"/":                                       "",
	} {
		if got := URIBase(in); got != want {
			t.Errorf("URIBase(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExplainExit(t *testing.T) {
	if got := ExplainStatus("Command exited with status 65"); !strings.Contains(got, "SHA-256") {
		t.Errorf("ExplainStatus: %q", got)
	}
	if got := ExplainStatus("Command exited with status 1"); got != "Command exited with status 1" {
		t.Errorf("ExplainStatus changed an ordinary failure: %q", got)
	}
	if ExitExplained(65<<8) == "" || ExitExplained(1<<8) != "" || ExitExplained(65) != "" {
		t.Error("ExitExplained: wrong wait statuses recognised")
	}
}
