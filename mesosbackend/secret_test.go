package mesosbackend

import (
	"errors"
	"testing"

	"github.com/flint-mesos/flint/framework/config"
)

// Both Mesos modes take their secret from AppSecret: the configured one
// when long enough, a fresh random one when unset, and an error (not a
// silent replacement) for a short one that reached the backend without
// Load.
func TestAppSecretPolicy(t *testing.T) {
	const long = "0123456789abcdef-application"
	if s, err := AppSecret(loadConfig(t, "flint.authenticate.secret="+long)); err != nil || s != long {
		t.Fatalf("configured secret: %q, %v", s, err)
	}
	a, err := AppSecret(loadConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := AppSecret(loadConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(a) < config.MinSecretLen || a == b {
		t.Fatalf("random secrets %q and %q: too short or equal", a, b)
	}
	c := config.New()
	if err := c.Set("flint.authenticate.secret", "short"); err != nil {
		t.Fatal(err)
	}
	if s, err := AppSecret(c); !errors.Is(err, config.ErrInvalidValue) || s != "" {
		t.Fatalf("short secret: %q, %v; want an ErrInvalidValue and no secret", s, err)
	}
}
