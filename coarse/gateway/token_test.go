package gateway

import "testing"

func TestExecutorTokensDifferPerExecutorAndSecret(t *testing.T) {
	a, b := ExecutorToken("s", "1"), ExecutorToken("s", "2")
	if a == b || a == ExecutorToken("t", "1") || a != ExecutorToken("s", "1") || len(a) != 43 {
		t.Fatalf("tokens %q %q %q", a, b, ExecutorToken("t", "1"))
	}
}
