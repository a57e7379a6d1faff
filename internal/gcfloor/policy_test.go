package gcfloor

import (
	"os"
	"runtime"
	"testing"
)

func TestForMemoryIsASixteenthCappedAt256MiB(t *testing.T) {
	for _, c := range []struct{ memory, want int64 }{
		{0, 0},
		{64 * mib, 4 * mib},
		{1024 * mib, 64 * mib}, // the 1g default
		{4096 * mib, 256 * mib},
		{8192 * mib, 256 * mib}, // 1/16 would be 512 MiB: capped
	} {
		if got := ForMemory(c.memory); got != c.want {
			t.Errorf("ForMemory(%d MiB) = %d MiB, want %d MiB", c.memory/mib, got/mib, c.want/mib)
		}
	}
}

func TestHoldFromEnvHoldsTheFloorItNames(t *testing.T) {
	noGOGC(t)
	t.Setenv(EnvFloor, "67108864") // 64 MiB
	runtime.GC()
	base, _ := read()
	release, floor, err := HoldFromEnv()
	if err != nil || floor != 64*mib {
		t.Fatalf("HoldFromEnv() = floor %d, %v; want 64 MiB, nil", floor, err)
	}
	if _, goal := read(); goal < 64*mib {
		t.Errorf("with %s=64 MiB held the heap goal is %d MiB, want ≥ 64 MiB", EnvFloor, goal/mib)
	}
	release()
	if p, _ := read(); p != base {
		t.Errorf("after release the GC percent is %d, want the base %d", p, base)
	}
}

func TestHoldFromEnvHoldsNothingWithoutAFloorOrUnderGOGC(t *testing.T) {
	for _, c := range []struct {
		name, floor, gogc string // "-": unset
	}{
		{"no floor", "-", "-"},
		{"an empty floor", "", "-"},
		{"GOGC set", "67108864", "100"},
	} {
		t.Run(c.name, func(t *testing.T) {
			setOrUnset(t, EnvFloor, c.floor)
			setOrUnset(t, "GOGC", c.gogc)
			runtime.GC()
			p0, goal0 := read()
			release, floor, err := HoldFromEnv()
			defer release()
			if err != nil || floor != 0 {
				t.Fatalf("HoldFromEnv() = floor %d, %v; want 0, nil", floor, err)
			}
			if p, goal := read(); p != p0 || goal != goal0 {
				t.Errorf("GC percent %d → %d, heap goal %d → %d MiB; want both unchanged", p0, p, goal0/mib, goal/mib)
			}
		})
	}
}

func TestHoldFromEnvRefusesAMalformedFloor(t *testing.T) {
	noGOGC(t)
	for _, v := range []string{"64MiB", "-1", "1e9"} {
		t.Setenv(EnvFloor, v)
		release, floor, err := HoldFromEnv()
		release()
		if err == nil || floor != 0 {
			t.Errorf("%s=%q: floor %d, error %v; want 0 and an error", EnvFloor, v, floor, err)
		}
	}
}

// setOrUnset sets name to v for the test, or unsets it when v is "-".
func setOrUnset(t *testing.T, name, v string) {
	t.Setenv(name, v) // restored after the test
	if v == "-" {
		os.Unsetenv(name)
	}
}
