package s3_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// No test may reach the instance metadata service (a non-loopback address).
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	goleak.VerifyTestMain(m)
}
