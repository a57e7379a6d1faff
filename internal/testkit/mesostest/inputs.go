package mesostest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"testing"

	"github.com/flint-mesos/flint/framework"
)

// Size returns the length of its input and its first byte. It is registered
// in every test binary importing this package, so executors started from
// those binaries run it too.
var Size = framework.Register("mesostest.size", func(_ context.Context, b []byte) ([2]int, error) {
	if len(b) == 0 {
		return [2]int{}, nil
	}
	return [2]int{len(b), int(b[0])}, nil
})

// LargeInputs runs n tasks of each bytes input each at once and checks every
// task saw its own whole input.
func LargeInputs(ctx context.Context, fc *framework.Context, n, each int) error {
	var in [][]byte
	for i := range n {
		in = append(in, bytes.Repeat([]byte{byte(i + 1)}, each))
	}
	out, err := framework.Map(ctx, fc, Size, in)
	if err != nil {
		return err
	}
	for i, o := range out {
		if o != [2]int{each, i + 1} {
			return fmt.Errorf("task %d saw %v, want [%d %d]", i, o, each, i+1)
		}
	}
	return nil
}

// FreePort is a loopback TCP port nothing listens on (closed right away).
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
