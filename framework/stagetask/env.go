package stagetask

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
)

// Env is one application's runtime environment in one process: what the
// stage tasks an executor runs for that application share beyond a task
// (bigslice's split of API from exec). It holds the executor's shuffle and
// the state the layers above keep for the application, by key — the
// dataset layer's cached partitions, loaded broadcasts and rebuilt
// graphs, and (on a driver) its broadcast numbers. Nothing of it is
// process-wide: two Contexts in one process (local mode) have an Env each,
// and a coarse or fine executor has one for the application it runs.
//
// Its creator owns it: the local backend (one per Context), the coarse and
// fine executors (one per executor process), and a Context that has no
// in-process executor (a driver-only Env, without a shuffle). The creator
// hands it to tasks through their context (NewContext, read with
// EnvFrom) and closes it when the application ends there, after its tasks
// have returned.
type Env struct {
	shuffle  *shuffleenv.Env
	statuses *MapStatuses

	mu     sync.Mutex
	closed bool
	states map[any]io.Closer
	inproc StatusSource // SetStatusSource's
}

// NewEnv is an environment over the executor's shuffle (nil for a
// driver-only environment).
func NewEnv(sh *shuffleenv.Env) *Env {
	e := &Env{shuffle: sh, states: map[any]io.Closer{}}
	e.statuses = NewMapStatuses(e.loadStatuses)
	return e
}

// MapStatuses is the application's cache of map statuses on this
// executor, which stage tasks cut their blocks from.
func (e *Env) MapStatuses() *MapStatuses { return e.statuses }

// SetStatusSource sets where statuses a task names without a file come
// from: the driver in the same process (the local backend's).
func (e *Env) SetStatusSource(src StatusSource) {
	e.mu.Lock()
	e.inproc = src
	e.mu.Unlock()
}

// loadStatuses loads what ref names: the task's file, or the in-process
// source.
func (e *Env) loadStatuses(ctx context.Context, ref StatusRef) (*mapoutput.Snapshot, error) {
	if ref.File != "" {
		return FileStatuses(ctx, ref)
	}
	e.mu.Lock()
	src := e.inproc
	e.mu.Unlock()
	if src == nil {
		return nil, ErrNoStatusSource
	}
	return src(ctx, ref)
}

// ReleaseShuffle applies a driver's shuffle release (see
// shuffleenv.Env.ReleaseShuffle): the executor's shuffle deletes the
// outputs, and the released shuffle's map statuses (the driver's own
// shuffle ids: namespace "") are dropped.
func (e *Env) ReleaseShuffle(ns string, shuffleID int, all bool) error {
	if ns == "" {
		e.statuses.Forget(shuffleID)
	}
	if e.shuffle == nil {
		return nil
	}
	return e.shuffle.ReleaseShuffle(ns, shuffleID, all)
}

// Shuffle is the executor's shuffle, nil in a driver-only environment.
func (e *Env) Shuffle() *shuffleenv.Env { return e.shuffle }

// State is the state kept under key (a comparable value of a type the
// caller owns), made by mk the first time it is asked for. Close closes
// it. After Close a fresh state is made and not kept.
func (e *Env) State(key any, mk func() io.Closer) io.Closer {
	e.mu.Lock()
	defer e.mu.Unlock()
	if s, ok := e.states[key]; ok {
		return s
	}
	s := mk()
	if !e.closed {
		e.states[key] = s
	}
	return s
}

// Close releases every state kept (their files included); it is
// idempotent. The shuffle is its owner's to close.
func (e *Env) Close() error {
	e.mu.Lock()
	states := e.states
	e.states, e.closed = map[any]io.Closer{}, true
	e.mu.Unlock()
	e.statuses.ForgetAll()
	var errs []error
	for _, s := range states {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

type envKey struct{}

// NewContext is ctx carrying env for the tasks that derive from it, and
// env's shuffle (shuffleenv.FromContext) when it has one.
func NewContext(ctx context.Context, env *Env) context.Context {
	if env.shuffle != nil {
		ctx = shuffleenv.NewContext(ctx, env.shuffle)
	}
	return context.WithValue(ctx, envKey{}, env)
}

// EnvFrom is the environment ctx carries (a task's: its executor's).
func EnvFrom(ctx context.Context) (*Env, bool) {
	e, ok := ctx.Value(envKey{}).(*Env)
	return e, ok
}

// EnvOwner is a backend that runs tasks in the driver's process (local
// mode) and so owns the Context's environment.
type EnvOwner interface {
	TaskEnv() *Env
}
