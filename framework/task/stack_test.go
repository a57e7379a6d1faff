package task_test

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/task"
)

func userHelper(m map[string]int) { m["x"] = 1 } // panics: nil map

// A recovered panic's stack keeps the panic and the user's frames, first,
// and drops the recovering code above and the task runner below.
func TestTrimStackKeepsTheUsersFramesFirst(t *testing.T) {
	var stack string
	func() {
		defer func() {
			recover()
			stack = task.TrimStack(debug.Stack())
		}()
		userHelper(nil)
	}()
	lines := strings.Split(strings.TrimSpace(stack), "\n")
	if !strings.HasPrefix(lines[0], "goroutine ") || !strings.HasPrefix(lines[1], "panic(") {
		t.Fatalf("stack does not start with the goroutine and the panic:\n%s", stack)
	}
	if !strings.Contains(lines[3], "task_test.userHelper") || !strings.Contains(lines[4], "stack_test.go:") {
		t.Fatalf("the user's frame does not come right after the panic:\n%s", stack)
	}
	if strings.Contains(stack, "runtime/debug.Stack") || strings.Contains(stack, "testing.tRunner") {
		t.Fatalf("the recovering code or the test runner is left in:\n%s", stack)
	}
}

func TestTrimStackOfFlintsOwnPanicKeepsItsFrames(t *testing.T) {
	in := "goroutine 7 [running]:\nruntime/debug.Stack()\n\t/go/debug/stack.go:26 +0x5e\n" +
		"github.com/flint-mesos/flint/executor.invoke.func1()\n\t/x/executor/run.go:133 +0x1\n" +
		"panic({0x1, 0x2})\n\t/go/runtime/panic.go:792 +0x132\n" +
		"github.com/flint-mesos/flint/framework/dataset.(*Builder).freeze(...)\n\t/x/framework/dataset/builder.go:150\n" +
		"github.com/flint-mesos/flint/executor.(*Runtime).work(0xc0)\n\t/x/executor/runtime.go:146 +0xc5\n"
	out := task.TrimStack([]byte(in))
	want := "goroutine 7 [running]:\npanic({0x1, 0x2})\n\t/go/runtime/panic.go:792 +0x132\n" +
		"github.com/flint-mesos/flint/framework/dataset.(*Builder).freeze(...)\n\t/x/framework/dataset/builder.go:150\n" +
		"github.com/flint-mesos/flint/executor.(*Runtime).work(0xc0)\n\t/x/executor/runtime.go:146 +0xc5\n"
	if out != want {
		t.Fatalf("trimmed to\n%s\nwant\n%s", out, want)
	}
	user := strings.Replace(in, "github.com/flint-mesos/flint/framework/dataset.(*Builder).freeze(...)", "main.main.func1(...)", 1)
	if out := task.TrimStack([]byte(user)); !strings.HasSuffix(out, "main.main.func1(...)\n\t/x/framework/dataset/builder.go:150\n… 1 frame of Flint's task runner below\n") {
		t.Fatalf("trimmed to\n%s", out)
	}
}
