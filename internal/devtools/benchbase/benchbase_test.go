package benchbase

import "testing"

func TestBaselinesMoveTheBytes(t *testing.T) {
	const total = 3<<20 + 17 // not a multiple of the write size
	c, err := TCPCopy(total)
	if err != nil || c.Wall <= 0 {
		t.Fatalf("TCPCopy: %+v, %v", c, err)
	}
	c, err = DiskWriteRead(t.TempDir(), total)
	if err != nil || c.Wall <= 0 {
		t.Fatalf("DiskWriteRead: %+v, %v", c, err)
	}
}
