package secretcheck

import (
	"os"
	"strings"
	"testing"
)

// The values this scenario hands Flint are listed for scripts/check-test-secrets, which
// searches every log `make test` kept for them.
func TestValuesAreListedForTheLogCheck(t *testing.T) {
	b, err := os.ReadFile("../../../scripts/test-secrets.txt")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		listed[strings.TrimSpace(l)] = true
	}
	for _, v := range []string{DBPassword, APISecret, UISecret, RefValue} {
		if !listed[v] {
			t.Errorf("%.6s… is not in scripts/test-secrets.txt", v)
		}
	}
}
