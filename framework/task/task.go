package task

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/flint-mesos/flint/framework/codec"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrUnknownFunction: no function is registered under the name.
	ErrUnknownFunction = errors.New("task: unknown function")
	// ErrDuplicate: a function is already registered under the name.
	ErrDuplicate = errors.New("task: duplicate function")
	// ErrDecode: a function's input (or a task's result) could not be decoded.
	ErrDecode = errors.New("task: decode failed")
	// ErrEncode: a function's output (or a task's input) could not be encoded.
	ErrEncode = errors.New("task: encode failed")
	// ErrFrozen: the registry no longer accepts functions (flint.Main has
	// started: a function registered now would be missing on executors).
	ErrFrozen = errors.New("task: registration after the program started")
	// ErrNotRetryable marks a failure no retry can fix (NotRetryable): the
	// stage aborts with the task's first failure instead of retrying it.
	ErrNotRetryable = errors.New("task: retrying cannot fix this failure")
)

// NotRetryable marks err as a failure no retry can fix: errors.Is(err,
// ErrNotRetryable) holds and its message stays err's. A nil err stays nil.
func NotRetryable(err error) error {
	if err == nil {
		return nil
	}
	return notRetryable{err}
}

type notRetryable struct{ error }

func (e notRetryable) Unwrap() error        { return e.error }
func (e notRetryable) Is(target error) bool { return target == ErrNotRetryable }

// maxListedNames bounds how many registered names an ErrUnknownFunction
// error lists.
const maxListedNames = 10

// Entry is a registered function as the executor sees it: bytes in, bytes
// out.
type Entry interface {
	// Name is the name the function is registered under.
	Name() string
	// Codec encodes the function's input and output.
	Codec() codec.Codec
	// Invoke decodes input, calls the function and encodes its output.
	// Decode failures wrap ErrDecode, encode failures ErrEncode; the
	// function's own error is returned unchanged. Panics are not recovered.
	Invoke(ctx context.Context, input []byte) ([]byte, error)
}

// Timings splits the time an invocation took.
type Timings struct {
	Decode, Run, Encode time.Duration
}

// TimedEntry is an Entry that can report how long decoding, running and
// encoding took. Entries created by Register implement it.
type TimedEntry interface {
	Entry
	// InvokeTimed is Invoke measuring with now (time.Now if nil). The
	// timings of the stages reached are filled even when err != nil.
	InvokeTimed(ctx context.Context, input []byte, now func() time.Time) ([]byte, Timings, error)
}

// Registry maps function names to entries. It is safe for concurrent use.
type Registry struct {
	mu      sync.RWMutex
	entries map[string]Entry
	frozen  bool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{entries: make(map[string]Entry)}
}

var defaultRegistry = NewRegistry()

// Default returns the process-wide registry user code registers into from
// init() and the executor runs tasks from.
func Default() *Registry { return defaultRegistry }

// Lookup returns the entry registered under name. The error wraps
// ErrUnknownFunction, names the function and lists up to 10 registered
// names.
func (r *Registry) Lookup(name string) (Entry, error) {
	r.mu.RLock()
	e, ok := r.entries[name]
	r.mu.RUnlock()
	if ok {
		return e, nil
	}
	names := r.Names()
	listed := names[:min(len(names), maxListedNames)]
	var more string
	if n := len(names) - len(listed); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return nil, fmt.Errorf("%w %q (%d registered: [%s]%s)",
		ErrUnknownFunction, name, len(names), strings.Join(listed, " "), more)
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.entries))
	for name := range r.entries {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Freeze makes r refuse further registrations with ErrFrozen: flint.Main
// calls it on the default registry before it runs the driver or an
// executor, so a late registration fails where it happens instead of as a
// task that executors cannot find.
func (r *Registry) Freeze() {
	r.mu.Lock()
	r.frozen = true
	r.mu.Unlock()
}

// Frozen reports whether Freeze was called.
func (r *Registry) Frozen() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.frozen
}

// Fingerprint is the hex SHA-256 of the registered names and their codecs,
// sorted: driver and executors compare it at registration, so an executor
// whose registrations differ (registered conditionally, another build) is
// refused before it runs a task.
func (r *Registry) Fingerprint() string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.entries))
	for n, e := range r.entries {
		names = append(names, n+"\x00"+e.Codec().Name())
	}
	slices.Sort(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func (r *Registry) add(e Entry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.frozen {
		return fmt.Errorf("%w: %q: register from init or a package-level var", ErrFrozen, e.Name())
	}
	if _, dup := r.entries[e.Name()]; dup {
		return fmt.Errorf("%w %q", ErrDuplicate, e.Name())
	}
	r.entries[e.Name()] = e
	return nil
}

// Register adds fn to r under name, encoding its input and output with c
// (codec.Default() if nil), and returns the typed handle the driver uses to
// encode inputs and decode results. Registering a name twice fails with
// ErrDuplicate.
func Register[In, Out any](r *Registry, name string, fn func(context.Context, In) (Out, error), c codec.Codec) (Handle[In, Out], error) {
	var errs []error
	if r == nil {
		errs = append(errs, errors.New("task: nil registry"))
	}
	if name == "" {
		errs = append(errs, errors.New("task: empty function name"))
	}
	if fn == nil {
		errs = append(errs, fmt.Errorf("task: nil function %q", name))
	}
	if err := errors.Join(errs...); err != nil {
		return Handle[In, Out]{}, err
	}
	if c == nil {
		c = codec.Default()
	}
	e := &entry[In, Out]{name: name, codec: c, fn: fn}
	if err := r.add(e); err != nil {
		return Handle[In, Out]{}, err
	}
	return Handle[In, Out]{name: name, codec: c}, nil
}

// MustRegister is Register that panics on error, for package-level
// variables initialised at program start.
func MustRegister[In, Out any](r *Registry, name string, fn func(context.Context, In) (Out, error), c codec.Codec) Handle[In, Out] {
	h, err := Register(r, name, fn, c)
	if err != nil {
		panic(err)
	}
	return h
}

// entry is the Entry Register creates.
type entry[In, Out any] struct {
	name  string
	codec codec.Codec
	fn    func(context.Context, In) (Out, error)
}

var _ TimedEntry = (*entry[int, int])(nil)

func (e *entry[In, Out]) Name() string       { return e.name }
func (e *entry[In, Out]) Codec() codec.Codec { return e.codec }

func (e *entry[In, Out]) Invoke(ctx context.Context, input []byte) ([]byte, error) {
	out, _, err := e.InvokeTimed(ctx, input, nil)
	return out, err
}

func (e *entry[In, Out]) InvokeTimed(ctx context.Context, input []byte, now func() time.Time) ([]byte, Timings, error) {
	if now == nil {
		now = time.Now
	}
	var t Timings
	start := now()
	var in In
	err := e.codec.Unmarshal(input, &in)
	decoded := now()
	t.Decode = decoded.Sub(start)
	if err != nil {
		return nil, t, fmt.Errorf("%w: function %q, codec %s, input of %d bytes: %w",
			ErrDecode, e.name, e.codec.Name(), len(input), err)
	}
	out, err := e.fn(ctx, in)
	ran := now()
	t.Run = ran.Sub(decoded)
	if err != nil {
		return nil, t, err
	}
	data, err := e.codec.Marshal(out)
	t.Encode = now().Sub(ran)
	if err != nil {
		return nil, t, fmt.Errorf("%w: function %q, codec %s, output %T: %w",
			ErrEncode, e.name, e.codec.Name(), out, err)
	}
	return data, t, nil
}

// Handle is the typed view of a registered function, used by the driver to
// build task inputs and read results.
type Handle[In, Out any] struct {
	name  string
	codec codec.Codec
}

// Name is the function's registered name.
func (h Handle[In, Out]) Name() string { return h.name }

// Codec is the function's codec.
func (h Handle[In, Out]) Codec() codec.Codec { return h.codec }

// EncodeInput encodes an input for the function; errors wrap ErrEncode.
func (h Handle[In, Out]) EncodeInput(in In) ([]byte, error) {
	if h.codec == nil {
		return nil, fmt.Errorf("%w: zero Handle", ErrEncode)
	}
	data, err := h.codec.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("%w: input of function %q, codec %s: %w", ErrEncode, h.name, h.codec.Name(), err)
	}
	return data, nil
}

// DecodeOutput decodes a result of the function; errors wrap ErrDecode.
func (h Handle[In, Out]) DecodeOutput(data []byte) (Out, error) {
	var out Out
	if h.codec == nil {
		return out, fmt.Errorf("%w: zero Handle", ErrDecode)
	}
	if err := h.codec.Unmarshal(data, &out); err != nil {
		return out, fmt.Errorf("%w: result of function %q, codec %s, %d bytes: %w",
			ErrDecode, h.name, h.codec.Name(), len(data), err)
	}
	return out, nil
}
