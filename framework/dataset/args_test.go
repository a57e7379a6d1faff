package dataset_test

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/flint-mesos/flint/framework/dataset"
)

type innerArgs struct {
	Label string
	Scale func(int) int
	Done  chan struct{}
}

type node struct {
	Name string
	Next *node
}

type travelArgs struct {
	N       int
	Words   []string
	When    time.Time // encodes itself
	Big     *big.Int  // encodes itself
	Inner   innerArgs
	Any     any
	ByName  map[string]any
	List    *node
	private int
}

var travelRan = map[int]bool{}

var travelJob = dataset.Job("test.travel", func(b *dataset.Builder, a travelArgs) error {
	n, err := dataset.Count(dataset.Parallelize(b, a.Words, 1))
	if b.Driver() {
		travelRan[a.N] = n == int64(len(a.Words))
	}
	return err
})

// Arguments the executors would not get as they are on the driver are
// refused when the job starts, with one error naming the field, its type
// and why; plain data (and types that encode themselves) pass.
func TestJobArgumentsThatCannotTravelAreRefused(t *testing.T) {
	fc := localContext(t)
	cyclic := &node{Name: "a"}
	cyclic.Next = &node{Name: "b", Next: cyclic}
	ch := make(chan struct{})
	x := 1
	cases := []struct {
		name string
		args travelArgs
		want []string // in the error
	}{
		{"func", travelArgs{Inner: innerArgs{Scale: func(i int) int { return i }}}, []string{"args.Inner.Scale", "func(int) int", "is a func", "nil"}},
		{"chan", travelArgs{Inner: innerArgs{Done: ch}}, []string{"args.Inner.Done", "chan struct {}", "is a chan"}},
		{"func in an interface", travelArgs{Any: func() {}}, []string{"args.Any", "func()"}},
		{"chan in a map", travelArgs{ByName: map[string]any{"c": ch}}, []string{`args.ByName["c"]`, "chan struct {}"}},
		{"unsafe pointer", travelArgs{Any: unsafe.Pointer(&x)}, []string{"args.Any", "unsafe.Pointer"}},
		{"unexported field", travelArgs{private: 7}, []string{"args.private", "unexported", "int", "zero value"}},
		{"cycle", travelArgs{List: cyclic}, []string{"args.List.Next.Next", "cyclic"}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.args.N = 100 + i
			_, err := travelJob.Run(context.Background(), fc, c.args)
			if !errors.Is(err, dataset.ErrArgumentCannotTravel) {
				t.Fatalf("error %v, want ErrArgumentCannotTravel", err)
			}
			t.Log(err)
			for _, w := range append(c.want, `job "test.travel"`) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if _, ran := travelRan[c.args.N]; ran {
				t.Error("the job ran")
			}
		})
	}

	ok := travelArgs{N: 1, Words: []string{"a", "b"}, When: time.Unix(5, 0), Big: big.NewInt(3),
		ByName: map[string]any{"n": 1}, List: &node{Name: "a", Next: &node{Name: "b"}}, Any: "text"}
	if _, err := travelJob.Run(context.Background(), fc, ok); err != nil {
		t.Fatal(err)
	}
	if !travelRan[1] {
		t.Fatal("plain arguments: the job did not count its two words")
	}
}

// heldValue is what the Value and broadcast cases hand the executors.
type heldValue struct {
	Label  string
	Scale  func(int) int
	Done   chan struct{}
	Next   *heldValue
	hidden int
}

// textOnly encodes itself for gob (TextMarshaler) but not for the record
// codec, which walks its exported fields and would drop the unexported one.
type textOnly struct {
	N int
	n int
}

func (t textOnly) MarshalText() ([]byte, error) { return []byte{byte('0' + t.N), byte('0' + t.n)}, nil }
func (t *textOnly) UnmarshalText(b []byte) error {
	t.N, t.n = int(b[0]-'0'), int(b[1]-'0')
	return nil
}

var heldRan = map[string]bool{}

var heldJob = dataset.Job("test.held-values", func(b *dataset.Builder, c string) error {
	cyclic := &heldValue{Label: "a"}
	cyclic.Next = &heldValue{Label: "b", Next: cyclic}
	v := map[string]heldValue{
		"func": {Scale: func(i int) int { return i }}, "chan": {Done: make(chan struct{})},
		"unexported": {hidden: 3}, "cycle": *cyclic,
		"plain": {Label: "plain", Next: &heldValue{Label: "b"}},
	}
	kind, name, _ := strings.Cut(c, ":")
	switch kind {
	case "value":
		got := dataset.Value(b, "held", func() heldValue { return v[name] })
		if name == "func" && got.Scale == nil {
			return errors.New("Value dropped the func on the driver")
		}
	case "broadcast":
		dataset.NewBroadcast(b, v[name])
	case "text":
		dataset.NewBroadcast(b, textOnly{N: 1, n: 4})
	case "any":
		dataset.NewBroadcast(b, map[string]any{"f": func() {}})
	}
	n, err := dataset.Count(dataset.Parallelize(b, []int{1, 2, 3}, 1))
	if b.Driver() && err == nil {
		heldRan[c] = n == 3
	}
	return err
})

// Issue 23, item 2: what a job hands its executors besides its arguments
// — a Value's result, a broadcast value — is refused on the driver with
// the arguments' one check (a func, a chan, an unexported field, a cycle):
// one error naming the field, its type and why, before any task runs.
// Plain values pass, and a type that only gob encodes by itself
// (TextMarshaler) is refused for a broadcast, whose record codec walks it.
func TestValuesAndBroadcastsThatCannotTravelAreRefused(t *testing.T) {
	fc := localContext(t)
	cases := []struct {
		c    string
		want []string
	}{
		{"value:func", []string{`Value("held").Scale`, "func(int) int", "is a func", "gob"}},
		{"value:chan", []string{`Value("held").Done`, "chan struct {}", "is a chan"}},
		{"value:unexported", []string{`Value("held").hidden`, "unexported", "int"}},
		{"value:cycle", []string{`Value("held").Next.Next`, "cyclic"}},
		{"broadcast:func", []string{"broadcast#0.Scale", "func(int) int", "the record codec"}},
		{"any", []string{`broadcast#0["f"]`, "func()", "gob"}},
		{"broadcast:unexported", []string{"broadcast#0.hidden", "unexported"}},
		{"broadcast:cycle", []string{"broadcast#0.Next.Next", "cyclic"}},
		{"text", []string{"broadcast#0.n", "unexported", "the record codec"}},
	}
	for _, c := range cases {
		t.Run(c.c, func(t *testing.T) {
			_, err := heldJob.Run(context.Background(), fc, c.c)
			if !errors.Is(err, dataset.ErrValueCannotTravel) {
				t.Fatalf("error %v, want ErrValueCannotTravel", err)
			}
			t.Log(err)
			for _, w := range append(c.want, `job "test.held-values"`) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if _, ran := heldRan[c.c]; ran {
				t.Error("the job ran its action")
			}
		})
	}
	for _, c := range []string{"value:plain", "broadcast:plain"} {
		if _, err := heldJob.Run(context.Background(), fc, c); err != nil || !heldRan[c] {
			t.Fatalf("%s: %v (ran: %v)", c, err, heldRan[c])
		}
	}
}
