package plural

import "testing"

func TestN(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 cores"}, {1, "1 core"}, {2, "2 cores"}} {
		if got := N(c.n, "core"); got != c.want {
			t.Errorf("N(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		x    float64
		want string
	}{{1, "1 cpu"}, {1.5, "1.5 cpus"}, {0.1, "0.1 cpus"}, {4, "4 cpus"}} {
		if got := F(c.x, "cpu"); got != c.want {
			t.Errorf("F(%g) = %q, want %q", c.x, got, c.want)
		}
	}
}
