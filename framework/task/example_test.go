package task_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/flint-mesos/flint/framework/task"
)

func Example() {
	r := task.NewRegistry() // user code would use task.Default() from init()
	words := task.MustRegister(r, "words", func(_ context.Context, line string) (int, error) {
		return len(strings.Fields(line)), nil
	}, nil)

	// Driver side: encode the input.
	input, _ := words.EncodeInput("to be or not to be")

	// Executor side: look the function up by name and run it on bytes.
	e, _ := r.Lookup(words.Name())
	result, _ := e.Invoke(context.Background(), input)

	// Driver side: decode the result.
	n, _ := words.DecodeOutput(result)
	fmt.Println(words.Name(), words.Codec().Name(), n)
	// Output: words gob 6
}
