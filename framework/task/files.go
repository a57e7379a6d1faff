package task

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrFileNotListed: the task's description did not list the added file
// asked for.
var ErrFileNotListed = errors.New("files: no such file for this task")

// Files is the added files one task was sent (Context.AddFile, AddDir,
// AddArchive): name → absolute local path (a file, or a directory for an
// extracted archive or an added directory). The executor runtime fetches
// them (executor/files) and puts them into the task's context
// (WithFiles); task code reads them through framework.TaskContextOf(ctx).File.
type Files map[string]string

// File returns the local path of the added file name.
func (f Files) File(name string) (string, error) {
	if p, ok := f[name]; ok {
		return p, nil
	}
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "", fmt.Errorf("%w: %q: no file was added before this task's stage was submitted (Context.AddFile)", ErrFileNotListed, name)
	}
	return "", fmt.Errorf("%w: %q was not added before this task's stage was submitted; the task has %s", ErrFileNotListed, name, strings.Join(names, ", "))
}

type filesKey struct{}

// WithFiles returns ctx carrying f.
func WithFiles(ctx context.Context, f Files) context.Context {
	return context.WithValue(ctx, filesKey{}, f)
}

// FilesFrom returns the Files in ctx; false when ctx carries none (not a
// task's context, or a task that was sent no files).
func FilesFrom(ctx context.Context) (Files, bool) {
	f, ok := ctx.Value(filesKey{}).(Files)
	return f, ok
}

// ValidFileName reports whether name can name an added file: a single
// path element, not "." or "..", no NUL. The driver checks it when a file
// is added, the executor before it stores one.
func ValidFileName(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return fmt.Errorf("files: %q is not a file name", name)
	case strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("files: %q is not a file name (no path separators)", name)
	}
	return nil
}
