package stagetask

import (
	"context"
	"io"
	"testing"

	"github.com/flint-mesos/flint/shuffle/shuffleenv"
)

type closeCount struct{ n int }

func (c *closeCount) Close() error { c.n++; return nil }

// An environment makes each key's state once, hands it to tasks through
// their context, and closes every state once however often it is
// closed; a state asked for afterwards is not kept.
func TestEnvStatesAndClose(t *testing.T) {
	type keyA struct{}
	type keyB struct{}
	e := NewEnv(nil)
	a := e.State(keyA{}, func() io.Closer { return &closeCount{} }).(*closeCount)
	if again := e.State(keyA{}, func() io.Closer { return &closeCount{} }); again != a {
		t.Fatal("the second State of a key made another state")
	}
	b := e.State(keyB{}, func() io.Closer { return &closeCount{} }).(*closeCount)
	if a == b {
		t.Fatal("two keys share a state")
	}
	ctx := NewContext(context.Background(), e)
	if got, ok := EnvFrom(ctx); !ok || got != e {
		t.Fatalf("EnvFrom = %p, %v; want the environment", got, ok)
	}
	if _, ok := shuffleenv.FromContext(ctx); ok {
		t.Error("a driver-only environment put a shuffle into the context")
	}
	if _, ok := EnvFrom(context.Background()); ok {
		t.Error("EnvFrom found an environment in a context without one")
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if a.n != 1 || b.n != 1 {
		t.Fatalf("states closed %d and %d times by two Closes, want once each", a.n, b.n)
	}
	late := e.State(keyA{}, func() io.Closer { return &closeCount{} })
	if late == a || e.State(keyA{}, func() io.Closer { return &closeCount{} }) == late {
		t.Error("a closed environment handed out a released state or kept a new one")
	}
}

// A task's context carries its environment's shuffle too.
func TestEnvContextCarriesShuffle(t *testing.T) {
	sh := &shuffleenv.Env{}
	e := NewEnv(sh)
	got, ok := shuffleenv.FromContext(NewContext(context.Background(), e))
	if !ok || got != sh || e.Shuffle() != sh {
		t.Fatalf("shuffleenv.FromContext = %p, %v; Shuffle() = %p; want %p", got, ok, e.Shuffle(), sh)
	}
}
