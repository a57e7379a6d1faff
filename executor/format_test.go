package executor

import "testing"

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB",
		3 << 20: "3.0 MiB", 5 << 30: "5.0 GiB", 1 << 62: "4.0 EiB",
	} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestNewUUIDVersion4(t *testing.T) {
	a, b := newUUID(), newUUID()
	if len(a) != 16 || a[6]>>4 != 4 || a[8]>>6 != 2 || string(a) == string(b) {
		t.Errorf("uuids %x %x", a, b)
	}
}
