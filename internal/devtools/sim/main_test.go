package sim

import (
	"testing"

	"go.uber.org/goleak"
)

// Every run stops its backend: no goroutine outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
