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
