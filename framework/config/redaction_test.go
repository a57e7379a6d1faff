package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// flint.redaction.regex (Spark's spark.redaction.regex) makes keys secret by
// name: Redacted hides them, Secrets lists the long values for the log hook.
func TestRedactionRegex(t *testing.T) {
	c := New()
	for k, v := range map[string]string{
		"flint.executorEnv.DB_PASSWORD": "pw-long-value",
		"flint.executorEnv.API_KEY":     "abc", // short: redacted in views, not searched in log lines
		"flint.executorEnv.HOME_DIR":    "/home/x",
		"flint.authenticate.secret":     "app-secret-value",
	} {
		if err := c.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	r := c.Redacted()
	if r["flint.executorEnv.DB_PASSWORD"] != Redaction || r["flint.executorEnv.API_KEY"] != Redaction ||
		r["flint.executorEnv.HOME_DIR"] != "/home/x" || r["flint.authenticate.secret"] != Redaction {
		t.Fatalf("Redacted: %v", r)
	}
	s := c.Secrets()
	if !slices.Contains(s, "pw-long-value") || !slices.Contains(s, "app-secret-value") || slices.Contains(s, "abc") || slices.Contains(s, "/home/x") {
		t.Fatalf("Secrets: %v", s)
	}
	if !c.IsSecretKey("flint.executorEnv.MY_TOKEN") || c.IsSecretKey("flint.executorEnv.GREETING") {
		t.Fatal("IsSecretKey does not follow the default regex")
	}
	// a regex of one's own: HOME_DIR secret, the default's words no longer
	if err := c.Set("flint.redaction.regex", "HOME_DIR$"); err != nil {
		t.Fatal(err)
	}
	r = c.Redacted()
	if r["flint.executorEnv.HOME_DIR"] != Redaction || r["flint.executorEnv.DB_PASSWORD"] != "pw-long-value" || r["flint.authenticate.secret"] != Redaction {
		t.Fatalf("Redacted with HOME_DIR$: %v", r)
	}
	if err := c.Set("flint.redaction.regex", "(unclosed"); !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), "want a regular expression") {
		t.Fatalf("an invalid regex: %v", err)
	}
}

// Every item of a list of secret values is removed from logs, not just the list.
func TestSecretListItems(t *testing.T) {
	c := New()
	if err := c.Set("flint.mesos.executor.secret.values", "first-secret, second-secret"); err != nil {
		t.Fatal(err)
	}
	s := c.Secrets()
	if !slices.Contains(s, "first-secret") || !slices.Contains(s, "second-secret") {
		t.Fatalf("Secrets: %v", s)
	}
}
