package backend_test

import (
	"context"
	"testing"

	"github.com/flint-mesos/flint/framework/backend"
)

// inner implements Backend and one optional interface, TaskSizeLimiter.
type inner struct{ backend.Backend }

func (inner) MaxTaskInput() (int, string) { return 7, "inner's limit" }

// wrapper wraps a backend and forwards no optional interface by hand.
type wrapper struct {
	backend.Backend
	in backend.Backend
}

func (w wrapper) Unwrap() backend.Backend { return w.in }

type plain struct{ backend.Backend }

func (plain) Start(context.Context, backend.Driver) error { return nil }

func TestAsLooksThroughUnwrap(t *testing.T) {
	in := inner{}
	for name, b := range map[string]backend.Backend{
		"itself":        in,
		"wrapped":       wrapper{in: in},
		"wrapped twice": wrapper{in: wrapper{in: in}},
	} {
		l, ok := backend.As[backend.TaskSizeLimiter](b)
		if !ok {
			t.Errorf("%s: no TaskSizeLimiter found", name)
			continue
		}
		if n, why := l.MaxTaskInput(); n != 7 || why != "inner's limit" {
			t.Errorf("%s: MaxTaskInput = %d, %q: not the inner backend's", name, n, why)
		}
	}
	for name, b := range map[string]backend.Backend{
		"none":                 plain{},
		"a wrapper of nothing": wrapper{},
		"a wrapper of none":    wrapper{in: plain{}},
		"a nil backend":        nil,
	} {
		if _, ok := backend.As[backend.FileServer](b); ok {
			t.Errorf("%s: a FileServer found", name)
		}
	}
}
