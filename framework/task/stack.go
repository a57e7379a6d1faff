package task

import (
	"fmt"
	"strings"

	"github.com/flint-mesos/flint/internal/plural"
)

// machinery are the packages of functions that run a task rather than
// make up its work: Flint's own (examples and tests are user code) and the
// Go runtime's.
var machinery = []string{
	"github.com/flint-mesos/flint/executor",
	"github.com/flint-mesos/flint/framework",
	"github.com/flint-mesos/flint/coarse",
	"github.com/flint-mesos/flint/fine",
	"github.com/flint-mesos/flint/proto",
	"github.com/flint-mesos/flint/shuffle",
	"github.com/flint-mesos/flint/internal",
	"runtime", "sync", "testing",
}

// isMachinery reports whether the function of a stack's frame line is in
// one of the machinery packages (or below one).
func isMachinery(frame string) bool {
	if strings.HasPrefix(frame, "created by ") {
		return true
	}
	fn := frame
	if i := strings.IndexByte(fn, '('); i >= 0 {
		fn = fn[:i]
	}
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return false
	}
	pkg := fn[:slash+1+dot]
	if strings.HasSuffix(pkg, "_test") {
		return false
	}
	for _, m := range machinery {
		if pkg == m || strings.HasPrefix(pkg, m+"/") {
			return true
		}
	}
	return false
}

// TrimStack trims a panic's stack as runtime/debug.Stack printed it in the
// deferred function that recovered it: the frames above the panic (the
// recovering code) go, and so do the frames below the last frame of the
// user's code (the executor running the task), replaced by one line
// counting them. The user's code comes first; Flint's frames between the
// user's stay. A stack with no user frame (Flint's own panic) keeps every
// frame below the panic.
func TrimStack(stack []byte) string {
	lines := strings.Split(strings.TrimRight(string(stack), "\n"), "\n")
	var header string
	if len(lines) > 0 && strings.HasPrefix(lines[0], "goroutine ") {
		header, lines = lines[0], lines[1:]
	}
	// frames: a function line, then its tab-indented file:line
	var frames [][2]string
	for i := 0; i < len(lines); i++ {
		f := [2]string{lines[i], ""}
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t") {
			f[1] = lines[i+1]
			i++
		}
		frames = append(frames, f)
	}
	for i := len(frames) - 1; i >= 0; i-- {
		if strings.HasPrefix(frames[i][0], "panic(") {
			frames = frames[i:] // where it was raised, then its callers
			break
		}
	}
	last := -1
	for i, f := range frames {
		if !isMachinery(f[0]) && !strings.HasPrefix(f[0], "panic(") {
			last = i
		}
	}
	var b strings.Builder
	if header != "" {
		b.WriteString(header + "\n")
	}
	keep := frames
	if last >= 0 {
		keep = frames[:last+1]
	}
	for _, f := range keep {
		b.WriteString(f[0])
		b.WriteByte('\n')
		if f[1] != "" {
			b.WriteString(f[1])
			b.WriteByte('\n')
		}
	}
	if n := len(frames) - len(keep); n > 0 {
		fmt.Fprintf(&b, "… %s of Flint's task runner below\n", plural.N(n, "frame"))
	}
	return b.String()
}
