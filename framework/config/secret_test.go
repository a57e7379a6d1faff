package config

import (
	"errors"
	"strings"
	"testing"
)

// A configured application secret shorter than MinSecretLen is refused at
// load, naming its source and length but never the value; unset and long
// enough ones load.
func TestShortSecretIsRefusedAtLoad(t *testing.T) {
	_, err := Load(LoadOptions{Conf: []string{"flint.authenticate.secret=short-secret"}})
	want := `config: flint.authenticate.secret (from --conf flint.authenticate.secret) has 12 characters, fewer than 16: set a longer one or leave it unset for a random secret per application: invalid value`
	if err == nil || err.Error() != want {
		t.Fatalf("Load = %v\nwant %s", err, want)
	}
	if !errors.Is(err, ErrInvalidValue) || strings.Contains(err.Error(), "short-secret") {
		t.Fatalf("error %q: not ErrInvalidValue, or it shows the secret", err)
	}
	for _, conf := range [][]string{nil, {"flint.authenticate.secret=0123456789abcdef"}} {
		c, err := Load(LoadOptions{Conf: conf})
		if err != nil {
			t.Fatalf("Load(%q) = %v", conf, err)
		}
		if err := c.CheckSecret(); err != nil {
			t.Fatalf("CheckSecret after Load(%q) = %v", conf, err)
		}
	}
	// Set programmatically (no Load), CheckSecret still refuses it.
	c := New()
	if err := c.Set("flint.authenticate.secret", "0123456789abcde"); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckSecret(); !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), "has 15 characters") {
		t.Fatalf("CheckSecret = %v", err)
	}
}
