package task_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/codec"
	"github.com/flint-mesos/flint/framework/task"
)

type point struct{ X, Y int }

func sum(_ context.Context, p point) (int, error) { return p.X + p.Y, nil }

func TestRegisterInvokeRoundTrip(t *testing.T) {
	for _, c := range []codec.Codec{nil, codec.Gob, codec.JSON} {
		r := task.NewRegistry()
		h, err := task.Register(r, "sum", sum, c)
		if err != nil {
			t.Fatal(err)
		}
		want := codec.Default()
		if c != nil {
			want = c
		}
		if h.Name() != "sum" || h.Codec() != want {
			t.Fatalf("handle = %q/%v, want sum/%v", h.Name(), h.Codec(), want)
		}
		in, err := h.EncodeInput(point{2, 40})
		if err != nil {
			t.Fatal(err)
		}
		e, err := r.Lookup("sum")
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() != "sum" || e.Codec() != want {
			t.Errorf("entry = %q/%v", e.Name(), e.Codec())
		}
		outBytes, err := e.Invoke(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := h.DecodeOutput(outBytes)
		if err != nil || out != 42 {
			t.Errorf("%s: DecodeOutput = %d, %v; want 42", want.Name(), out, err)
		}
	}
}

func TestRegisterErrors(t *testing.T) {
	r := task.NewRegistry()
	if _, err := task.Register(r, "sum", sum, nil); err != nil {
		t.Fatal(err)
	}
	_, err := task.Register(r, "sum", sum, codec.JSON)
	if !errors.Is(err, task.ErrDuplicate) || !strings.Contains(err.Error(), `"sum"`) {
		t.Errorf("duplicate Register error = %v", err)
	}
	_, err = task.Register[point, int](r, "", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "empty function name") || !strings.Contains(err.Error(), "nil function") {
		t.Errorf("empty name, nil fn error = %v", err)
	}
	if _, err := task.Register(nil, "x", sum, nil); err == nil {
		t.Error("Register into a nil registry succeeded")
	}
	if got := r.Names(); len(got) != 1 || got[0] != "sum" {
		t.Errorf("Names() = %v after failed registrations", got)
	}
}

func TestMustRegisterPanicsOnDuplicate(t *testing.T) {
	r := task.NewRegistry()
	task.MustRegister(r, "f", sum, nil)
	defer func() {
		if err, ok := recover().(error); !ok || !errors.Is(err, task.ErrDuplicate) {
			t.Errorf("recovered %v, want ErrDuplicate", err)
		}
	}()
	task.MustRegister(r, "f", sum, nil)
}

func TestLookupUnknownListsNames(t *testing.T) {
	r := task.NewRegistry()
	_, err := r.Lookup("nope")
	if !errors.Is(err, task.ErrUnknownFunction) || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("Lookup on empty registry = %v", err)
	}
	for i := range 12 {
		task.MustRegister(r, fmt.Sprintf("fn%02d", i), sum, nil)
	}
	_, err = r.Lookup("fn99")
	msg := err.Error()
	for _, want := range []string{"task: unknown function", `"fn99"`, "12 registered", "fn00", "fn09", "and 2 more"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "fn10") {
		t.Errorf("error %q lists more than 10 names", msg)
	}
}

func TestInvokeDecodeError(t *testing.T) {
	r := task.NewRegistry()
	task.MustRegister(r, "sum", sum, codec.JSON)
	e, _ := r.Lookup("sum")
	_, err := e.Invoke(context.Background(), []byte("{broken"))
	if !errors.Is(err, task.ErrDecode) {
		t.Fatalf("Invoke(garbage) = %v, want ErrDecode", err)
	}
	for _, want := range []string{`"sum"`, "json", "7 bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestInvokeEncodeError(t *testing.T) {
	r := task.NewRegistry()
	task.MustRegister(r, "chan", func(context.Context, int) (chan int, error) { return make(chan int), nil }, codec.JSON)
	e, _ := r.Lookup("chan")
	_, err := e.Invoke(context.Background(), []byte("1"))
	if !errors.Is(err, task.ErrEncode) || !strings.Contains(err.Error(), `"chan"`) {
		t.Fatalf("Invoke = %v, want ErrEncode naming the function", err)
	}
}

func TestInvokeFunctionErrorUnchanged(t *testing.T) {
	boom := errors.New("boom")
	r := task.NewRegistry()
	task.MustRegister(r, "fail", func(context.Context, int) (int, error) { return 0, boom }, codec.JSON)
	e, _ := r.Lookup("fail")
	_, err := e.Invoke(context.Background(), []byte("1"))
	if err != boom {
		t.Fatalf("Invoke = %v, want the function's own error", err)
	}
}

func TestInvokePassesContextAndDoesNotRecover(t *testing.T) {
	r := task.NewRegistry()
	type key struct{}
	task.MustRegister(r, "ctx", func(ctx context.Context, _ int) (string, error) {
		return ctx.Value(key{}).(string), nil
	}, codec.JSON)
	task.MustRegister(r, "panic", func(context.Context, int) (int, error) { panic("kaboom") }, codec.JSON)
	e, _ := r.Lookup("ctx")
	out, err := e.Invoke(context.WithValue(context.Background(), key{}, "v"), []byte("0"))
	if err != nil || string(out) != `"v"` {
		t.Errorf("Invoke(ctx) = %s, %v", out, err)
	}
	p, _ := r.Lookup("panic")
	defer func() {
		if r := recover(); r != "kaboom" {
			t.Errorf("recovered %v, want the function's panic", r)
		}
	}()
	_, _ = p.Invoke(context.Background(), []byte("0"))
}

func TestInvokeTimed(t *testing.T) {
	r := task.NewRegistry()
	task.MustRegister(r, "sum", sum, codec.JSON)
	e, _ := r.Lookup("sum")
	te, ok := e.(task.TimedEntry)
	if !ok {
		t.Fatalf("%T does not implement TimedEntry", e)
	}
	clock := time.Unix(0, 0)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	out, tm, err := te.InvokeTimed(context.Background(), []byte(`{"X":1,"Y":2}`), now)
	if err != nil || string(out) != "3" {
		t.Fatalf("InvokeTimed = %s, %v", out, err)
	}
	if tm != (task.Timings{Decode: time.Second, Run: time.Second, Encode: time.Second}) {
		t.Errorf("timings = %+v, want 1s each", tm)
	}
	_, tm, err = te.InvokeTimed(context.Background(), []byte(`x`), now)
	if !errors.Is(err, task.ErrDecode) || tm.Decode != time.Second || tm.Run != 0 {
		t.Errorf("failed decode: timings %+v, err %v", tm, err)
	}
}

func TestHandleErrors(t *testing.T) {
	h := task.MustRegister(task.NewRegistry(), "h", func(context.Context, chan int) (int, error) { return 0, nil }, codec.JSON)
	if _, err := h.EncodeInput(make(chan int)); !errors.Is(err, task.ErrEncode) {
		t.Errorf("EncodeInput(chan) = %v, want ErrEncode", err)
	}
	if _, err := h.DecodeOutput([]byte(`"s"`)); !errors.Is(err, task.ErrDecode) || !strings.Contains(err.Error(), `"h"`) {
		t.Errorf("DecodeOutput(string) = %v, want ErrDecode", err)
	}
	var zero task.Handle[int, int]
	if _, err := zero.EncodeInput(1); !errors.Is(err, task.ErrEncode) {
		t.Errorf("zero Handle EncodeInput = %v", err)
	}
	if _, err := zero.DecodeOutput(nil); !errors.Is(err, task.ErrDecode) {
		t.Errorf("zero Handle DecodeOutput = %v", err)
	}
}

func TestDefaultRegistry(t *testing.T) {
	if task.Default() == nil || task.Default() != task.Default() {
		t.Fatal("Default() is not one process-wide registry")
	}
}

func TestConcurrentRegisterLookup(t *testing.T) {
	r := task.NewRegistry()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 32 {
		name := fmt.Sprintf("f%d", i%16)
		wg.Go(func() {
			_, err := task.Register(r, name, sum, nil)
			if err != nil && !errors.Is(err, task.ErrDuplicate) {
				errs <- err
			}
			if _, err := r.Lookup(name); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(r.Names()); n != 16 {
		t.Errorf("%d names registered, want 16", n)
	}
}

func TestFreezeRefusesLateRegistrationAndFingerprintCoversNames(t *testing.T) {
	r := task.NewRegistry()
	if _, err := task.Register(r, "a", func(context.Context, int) (int, error) { return 0, nil }, nil); err != nil {
		t.Fatal(err)
	}
	before := r.Fingerprint()
	other := task.NewRegistry()
	if other.Fingerprint() == before {
		t.Fatal("an empty registry has the fingerprint of one with a function")
	}
	r.Freeze()
	_, err := task.Register(r, "b", func(context.Context, int) (int, error) { return 0, nil }, nil)
	if !errors.Is(err, task.ErrFrozen) || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("late registration: %v, want task.ErrFrozen naming b", err)
	}
	if r.Fingerprint() != before || !r.Frozen() {
		t.Fatal("a refused registration changed the registry")
	}
	if _, err := task.Register(other, "a", func(context.Context, int) (int, error) { return 0, nil }, nil); err != nil {
		t.Fatal(err)
	}
	if other.Fingerprint() != before {
		t.Fatal("registries with the same functions differ in fingerprint")
	}
}
