package framework_test

import (
	"context"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/internal/testkit/filescheck"
)

// In local mode, added files, directories, archives and remote URLs reach
// tasks through TaskContext.File, each fetched once.
func TestAddedFilesInLocalMode(t *testing.T) {
	fc := newContext(t, "flint.master=local[2]")
	filescheck.Check(t, fc, 4, false)
}

// Bad additions get one clear error each.
func TestAddFileRefusals(t *testing.T) {
	fc := newContext(t, "flint.master=local[1]")
	dir := t.TempDir()
	for _, c := range []struct {
		err  error
		want string
	}{
		{fc.AddFile(dir + "/missing.txt"), "no such file"},
		{fc.AddFile(dir), "a directory (use AddDir)"},
		{fc.AddFile("ftp://h/x.txt"), `unsupported scheme "ftp"`},
		{fc.AddFile("https://h/dir/"), "the URL names no file"},
		{fc.AddFile("https://h/x.txt?X-Amz-Signature=s3cr3t"), ""},
		{fc.AddDir(dir + "/missing"), "no such file"},
	} {
		switch {
		case c.want == "" && c.err != nil:
			t.Errorf("unexpected error: %v", c.err)
		case c.want != "" && (c.err == nil || !strings.Contains(c.err.Error(), c.want)):
			t.Errorf("error %v, want one containing %q", c.err, c.want)
		}
	}
	// another URL under the name x.txt: refused, without the first URL's query
	err := fc.AddFile("https://other/x.txt")
	if err == nil || !strings.Contains(err.Error(), "x.txt") || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("conflicting URL: %v (must name the file and hide the presigned query)", err)
	}
	if _, err := framework.TaskContextOf(context.Background()).File("x.txt"); err == nil || !strings.Contains(err.Error(), "not a task's context") {
		t.Fatalf("File outside a task: %v", err)
	}
}

// In local mode a remote URL added with #sha256= is verified by the
// executor: the right content reaches tasks, other content fails the job.
func TestRemoteFileChecksumsInLocalMode(t *testing.T) {
	fc := newContext(t, "flint.master=local[2]")
	filescheck.CheckRemoteChecksums(t, fc, 4)
}
