package sparkcases_test

import (
	"testing"

	_ "github.com/flint-mesos/flint/framework/local"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

func TestMain(m *testing.M) { threemode.Main(m) }
