package scheduler

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestNewValidatesConfig(t *testing.T) {
	cfg := DefaultConfig()
	cfg.TaskCPUs = -1
	cfg.LocalityWait[Any] = time.Second
	cfg.Speculation = SpeculationConfig{Enabled: true, Interval: 0, Quantile: 2, Multiplier: 1}
	cfg.Exclude.Timeout = 0
	cfg.Pools = []PoolConfig{{Name: "p", Weight: 0}}
	_, err := New(cfg, nil)
	if err == nil || !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("got %v, want ErrInvalidConfig", err)
	}
	for _, want := range []string{"TaskCPUs must be >= 1", "LocalityWait has no meaning for level ANY",
		"Speculation.Interval", "Speculation.Quantile", "Exclude.Timeout", `pool "p": weight must be >= 1`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if !strings.HasPrefix(line, "scheduler: ") {
			t.Errorf("error line %q lacks the package prefix", line)
		}
	}
	s, err := New(Config{}, nil)
	if err != nil {
		t.Fatalf("zero config: %v", err)
	}
	if c := s.Config(); c.TaskCPUs != 1 || c.MaxTaskFailures != 4 || c.localityWait(NodeLocal) != 3*time.Second {
		t.Fatalf("zero config defaults: %+v", c)
	}
}
